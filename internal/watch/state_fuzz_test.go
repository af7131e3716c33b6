package watch

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// refState is the reference reader of a state file that ParseState is held
// to: the same rules written over the tree of an independent, strict JSON
// decoder (internal/jsonoracle, on go-json-experiment's jsontext) rather
// than over encoding/json's tokens. ok is false when it refuses.
func refState(b []byte) (st State, ok bool) {
	if !utf8.Valid(b) {
		return State{}, false
	}
	n, err := jsonoracle.Decode(b)
	if err != nil || n.Kind != jsonoracle.Object {
		return State{}, false
	}
	seen := map[string]bool{}
	for _, m := range n.Members {
		if seen[m.Name] {
			return State{}, false
		}
		seen[m.Name] = true
		if !refMember(&st, m) {
			return State{}, false
		}
	}
	if !seen["path"] || st.Path == "" || !seen["next_step"] || st.Next > maxNextStep || st.Prev != nil && *st.Prev >= st.Next {
		return State{}, false
	}
	return st, true
}

// refMember sets the member m of st, and says whether it may be so.
func refMember(st *State, m jsonoracle.Member) bool {
	v := m.Value
	switch m.Name {
	case "path":
		st.Path = v.Literal
		return v.Kind == jsonoracle.String
	case "next_step":
		n, ok := refStep(v)
		st.Next = n
		return ok
	case "last_clean_step", "alarm_step":
		if v.Kind == jsonoracle.Null {
			return true
		}
		n, ok := refStep(v)
		if m.Name == "alarm_step" {
			st.Alarm = &n
		} else {
			st.Prev = &n
		}
		return ok
	}
	return false
}

// refStep is the step a number node holds: a whole decimal literal, 0 or
// more, within an int.
func refStep(v *jsonoracle.Node) (int, bool) {
	if v.Kind != jsonoracle.Number || strings.ContainsAny(v.Literal, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Literal, 10, 0)
	return int(n), err == nil && n >= 0
}

// stateSeeds are states as Save writes them and shapes a reader must
// refuse; testdata/fuzz/FuzzParseState holds more.
var stateSeeds = []string{
	"{\n \"path\": \"/job/dump\",\n \"next_step\": 4,\n \"last_clean_step\": 1,\n \"alarm_step\": 2\n}\n",
	`{"path": "/d", "next_step": 0, "last_clean_step": null, "alarm_step": null}`,
	`{"path": "/d\u003c\u00e9", "next_step": 1000000000}`,
	`{"path": "/d", "next_step": 3, "next_step": 3}`,
	`{"path": "/d", "next_step": -0}`,
	`{"path": "/d", "next_step": 1.0e0}`,
	`{"path": "/d", "next_step": [[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]}`,
	`{"path": "/d", "next_step": 1, "last_clean_step": 0} {}`,
	`{"path": "\ud800", "next_step": 1}`,
	`{"path": "/d", "next_step": NaN}`,
	"{\"path\": \"/d\xff\", \"next_step\": 1}",
}

// FuzzParseState holds ParseState, on any input, to the reference reader:
// both accept it or both refuse it, and when they accept they read the
// same state; what it accepts is written back by Save's encoding and read
// again as the same state; it never panics and takes time linear in the
// input.
func FuzzParseState(f *testing.F) {
	for _, s := range stateSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		start := time.Now()
		got, err := ParseState(b)
		if d := time.Since(start); d > time.Second+time.Duration(len(b))*time.Microsecond {
			t.Fatalf("ParseState took %v on %d bytes", d, len(b))
		}
		want, ok := refState(b)
		if errors.Is(refMarker(b), jsonoracle.ErrMarker) {
			return // the reference cannot decode this input unambiguously
		}
		switch {
		case ok && err != nil:
			t.Fatalf("ParseState(%q) refused what the reference reads as %s: %v", b, showState(want), err)
		case !ok && err == nil:
			t.Fatalf("ParseState(%q) = %s; the reference refuses it", b, showState(got))
		case ok && !sameState(got, want):
			t.Fatalf("ParseState(%q) = %s, the reference %s", b, showState(got), showState(want))
		case !ok:
			return
		}
		var saved bytes.Buffer
		if err := encodeState(&saved, &got); err != nil {
			t.Fatal(err)
		}
		again, err := ParseState(saved.Bytes())
		if err != nil || !sameState(again, got) {
			t.Fatalf("ParseState(%q) = %s, written back as %q and read as %s, %v", b, showState(got), saved.Bytes(), showState(again), err)
		}
	})
}

// refMarker is jsonoracle.ErrMarker when the input holds the strings the
// oracle reserves.
func refMarker(b []byte) error {
	if bytes.Contains(b, []byte(`\u0000\u0001`)) || bytes.Contains(b, []byte{0, 1}) {
		return jsonoracle.ErrMarker
	}
	return nil
}
