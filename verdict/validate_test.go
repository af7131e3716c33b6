package verdict

import (
	"encoding/json"
	"reflect"
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

// A saved verdict written again gives its bytes back: the monitor's
// findings keep the order of their members, and the fields of revision 2
// (origin.timeline, scanned.path) come back as they were; a verdict of
// revision 1 reads without them.
func TestParseWritesBack(t *testing.T) {
	saved := `{"schema":"nanhunt/verdict/v1","schema_revision":2,"anomaly":true,` +
		`"origin":{"step":5,"ranks":[2],"op":"Torch.sqrt.0.backward","timeline":{"rank":2,"file":"d/dump.json","calls":[` +
		`{"index":77,"op":"Torch.sqrt.0.backward","role":"root","phase":"backward","holds":"+inf","inputs":[],"outputs":[{"slot":"output.0","shape":[],"max":"inf","min":0,"mean":null,"norm":1.5,"holds":"+inf"}]}]}},` +
		`"scanned":{"path":"d"},"evidence":{"monitor":{"findings":{"zeta":1,"alpha":[2]}}}}`
	v, err := Parse([]byte(saved))
	if err != nil {
		t.Fatal(err)
	}
	tl := v.Origin.Timeline
	if v.SchemaRevision != 2 || v.Scanned.Path != "d" || tl == nil || len(tl.Calls) != 1 || tl.Calls[0].Outputs[0].Holds != "+inf" {
		t.Fatalf("revision %d, path %q, timeline %+v", v.SchemaRevision, v.Scanned.Path, tl)
	}
	b, err := json.Marshal(v.Evidence.Monitor)
	if err != nil || !strings.Contains(string(b), `"findings":{"zeta":1,"alpha":[2]}`) {
		t.Errorf("findings written again as %s (%v)", b, err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Parse(again)
	if err != nil || !reflect.DeepEqual(v, w) {
		t.Errorf("written again and read: %v\n%+v\nwant\n%+v", err, w, v)
	}

	old, err := Parse([]byte(`{"schema":"nanhunt/verdict/v1","anomaly":true,"origin":{"step":5,"ranks":[2],"op":"x","possible_sources":[]},"evidence":{"monitor":{"findings":null}}}`))
	if err != nil || old.SchemaRevision != 0 || old.Origin.Timeline != nil || old.Scanned.Path != "" || old.Evidence.Monitor.Findings != nil {
		t.Errorf("revision 1: %v, %+v", err, old)
	}
}
