package verdict

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := Verdict{Schema: Schema, Anomaly: true, Origin: &Origin{Step: 5, Ranks: []int{2}, Op: "Torch.sqrt.0.backward"}}
	b, _ := json.Marshal(good)
	if v, err := Parse(b); err != nil || v.Origin.Op != "Torch.sqrt.0.backward" {
		t.Fatalf("Parse(good) = %+v, %v", v, err)
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"schema": "nanhunt/verdict/v1", "anomaly": true, "origin": {"step": 5, "ranks": [], "op": "X.y.0.forward"}}`, "origin.ranks is empty"},
		{`{"schema": "nanhunt/verdict/v1", "anomaly": true, "origin": {"step": 5, "ranks": [1], "op": ""}}`, "origin.op is empty"},
		{`{"schema": "nanhunt/verdict/v1", "anomaly": true, "origin": null}`, "no origin"},
		{`{"schema": "nanhunt/verdict/v1", "anomaly": true, "origin": {"step": -3, "ranks": [1], "op": "x"}}`, "origin.step is -3"},
		{`{"schema": "nanhunt/verdict/v9"}`, "this nanhunt reads"},
		{`{"schema": "other"}`, "not a nanhunt verdict"},
		{`{"schema": "nanhunt/verdict/v1", "anomaly": tru`, "not a JSON verdict"},
		{`{"schema": "nanhunt/verdict/v1", "anomaly": true, "origin": {"step": 5, "ranks": [1], "op": "x"}, "carrier": {"op": ""}}`, "carrier.op is empty"},
		{`{"schema": "nanhunt/verdict/v1", "origin": {"step": 5, "ranks": "2", "op": "x"}}`, "cannot unmarshal"},
	} {
		if _, err := Parse([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s) = %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`{"schema": "nanhunt/verdict/v1", "anomaly": true, "origin": {"step": 5, "ranks": [2], "op": "x"}}`)
	f.Add(`{"schema": "nanhunt/verdict/v1", "anomaly": false, "origin": null, "steps": [{"step": 1}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		v, err := Parse([]byte(doc))
		if err != nil {
			return
		}
		// whatever Parse accepts, a reader can use without checking again
		if o := v.Origin; o != nil && (len(o.Ranks) == 0 || o.Op == "") {
			t.Fatalf("accepted an origin with holes: %+v", o)
		}
		if v.Anomaly && v.Origin == nil && v.Evidence == nil {
			t.Fatal("accepted an anomaly without origin or evidence")
		}
	})
}
