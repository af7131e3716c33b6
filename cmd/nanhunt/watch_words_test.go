package main

import (
	"testing"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/watch"
	"github.com/nanhunt/nanhunt/verdict"
)

// The line of each step event: checked, or read late (folders that
// appeared after the watch had passed their step).
func TestStepWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    nanhunt.WatchEvent
		want string
	}{
		{"clean", nanhunt.WatchEvent{Step: 3, Status: watch.StatusClean, Ranks: []int{0, 1, 2}}, "step 3: clean (ranks 0-2)"},
		{"late clean", nanhunt.WatchEvent{Step: 0, Status: watch.StatusClean, Ranks: []int{1, 2, 3}, Late: true},
			"step 0: ranks 1-3 read late (folders that appeared after the watch had passed the step): clean"},
		{"late damaged", nanhunt.WatchEvent{Step: 0, Status: watch.StatusIncomplete, Ranks: []int{2}, Late: true,
			Unread: []verdict.UnreadRanks{{Step: 0, Ranks: []int{5}, Reason: "unreadable"}}},
			"step 0: ranks 2,5 read late (folders that appeared after the watch had passed the step): rank 5 could not be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stepWords(tc.e); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
