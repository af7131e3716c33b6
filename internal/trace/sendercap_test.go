package trace

import (
	"context"
	"os"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// The traps of the analysis on small hand-written dumps are cases of
// internal/cases (testdata/cases/traps), run through this package, the
// reference analyser and the tiny-limits mode alike. What stays here reads
// the rank scan's own state.

// Rank 0 makes NaN and sends it into a collective of group {0,2} that
// leaves rank 2's buffer clean, then carries it through more collectives
// of group {0,1} than a rank keeps whole, before the second one of group
// {0,2} reaches rank 2: rank 0's side of that one (neither among its first
// non-finite collectives nor the first of its group) is read again from
// its file, and it is the sender. When the file cannot be read again,
// rank 0 is inferred to be the sender (it held the anomaly), and its scan
// notes why. The dump is the case traps/sender-beyond-the-collective-cap.
func TestSenderBeyondTheCollectiveCap(t *testing.T) {
	// the case holds normalLimits.colls+44 collectives of group {0,1}
	const last = "Distributed.all_reduce.109.forward"
	for _, c := range []struct {
		name     string
		gone     bool // rank 0's dump.json is gone when the step is analysed
		inferred bool
		op       string
	}{
		{"read again", false, false, last},
		{"not readable again", true, true, "Distributed.all_reduce.1.forward"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := layCase(t, "traps/sender-beyond-the-collective-cap")
			l, err := dump.Discover(root)
			if err != nil {
				t.Fatal(err)
			}
			sc := newScanner(policy.Default(), nil)
			scans := map[int]*rankScan{}
			for _, rd := range l.Dirs {
				scans[rd.Rank] = sc.scanFile(context.Background(), rd, scanAll)
			}
			if !scans[0].collsFull {
				t.Fatal("rank 0 kept every collective: the test does not reach the limit")
			}
			if c.gone {
				if err := os.Remove(scans[0].dir.Dump); err != nil {
					t.Fatal(err)
				}
			}
			r := analyseStep(0, "", scans, roster{known: map[int]bool{0: true, 1: true, 2: true}})
			if !equalInts(r.sources, []int{0}) {
				t.Fatalf("sources = %v, want [0]", r.sources)
			}
			var toRank2 *hop
			for _, h := range r.hops {
				if equalInts(h.to, []int{2}) {
					toRank2 = h
				}
			}
			if toRank2 == nil || !equalInts(toRank2.from, []int{0}) || toRank2.inferred != c.inferred || toRank2.op != c.op {
				t.Errorf("hop to rank 2 = %+v, want from rank 0, op %s, inferred %v", toRank2, c.op, c.inferred)
			}
			if noted := len(scans[0].limits) > 0; noted != c.gone {
				t.Errorf("rank 0 notes %q; want a note %v", scans[0].limits, c.gone)
			}
		})
	}
}
