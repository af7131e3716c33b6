package watch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A watch that starts after the first step (From, or resumed from its
// state) expects the ranks of the step before its start too: a rank that
// stopped writing before it (a crash) is unread at its first step, not
// forgotten, so the watch does not end clean.
func TestWatchResumedExpectsEarlierRanks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state bool
	}{{"from", false}, {"state", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := generate(t, "legit-masks") // clean, steps 1-3
			for _, s := range []string{"step2", "step3"} {
				if err := os.RemoveAll(filepath.Join(dir, s, "rank3")); err != nil {
					t.Fatal(err)
				}
			}
			opt := Options{Path: dir, Poll: 20 * time.Millisecond, Settle: 50 * time.Millisecond,
				RankTimeout: 200 * time.Millisecond, IdleExit: 400 * time.Millisecond}
			if tc.state {
				opt.StateFile = filepath.Join(t.TempDir(), "state.json")
				if err := os.WriteFile(opt.StateFile, []byte(`{"path": "`+dir+`", "next_step": 2, "last_clean_step": 1, "alarm_step": null}`), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				opt.From = 2
			}
			var rec recorder
			res, err := Run(context.Background(), opt, rec.emit)
			if err != nil {
				t.Fatal(err)
			}
			if res.Complete || len(res.Unread) == 0 || res.Unread[0].Step != 2 || res.Unread[0].Ranks[0] != 3 {
				t.Fatalf("complete %v, unread %+v: rank 3, in step 1 before the start, has no folder in steps 2-3", res.Complete, res.Unread)
			}
			for _, e := range kinds(rec.events, EventStep) {
				if e.Status == StatusClean {
					t.Errorf("step %d called clean without rank 3", e.Step)
				}
			}
		})
	}
}
