package reference

import "github.com/nanhunt/nanhunt/internal/cases"

// The hand-written dumps and what the rules decide of them are cases of
// internal/cases (testdata/cases), run through the reference, the fast
// path and the tiny-limits mode alike. What stays here: the differential
// tests on generated and real dumps, the randomized runs, the fuzz test
// and the robustness of the reading.

// indented re-writes a document the way json.dump(indent=1) lays it out,
// with a final newline, when it can be decoded; otherwise it is returned
// as it is.
func indented(b []byte) []byte {
	laid, err := cases.MsprobeLayout(b)
	if err != nil {
		return b
	}
	return []byte(laid + "\n")
}
