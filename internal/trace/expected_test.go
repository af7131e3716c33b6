package trace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"
)

// Ranks known from outside the folders read (a watch's earlier steps) are
// expected at every step: one folder traced alone without rank 3's folder
// is incomplete, rank 3 unread with "no folder", and a rank that is not
// selected is not filled in.
func TestExpectedRanks(t *testing.T) {
	step1 := filepath.Join(scenarioDir(t, "log-negative"), "step1")
	if err := os.RemoveAll(filepath.Join(step1, "rank3")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		expected []int
		ranks    map[int]bool
		complete bool
		unread   []verdict.UnreadRanks
	}{
		{"ranks 0-2 alone", nil, nil, true, []verdict.UnreadRanks{}},
		{"rank 3 expected", []int{0, 1, 2, 3}, nil, false, []verdict.UnreadRanks{{Step: 1, Ranks: []int{3}, Reason: "no folder"}}},
		{"rank 3 expected, not selected", []int{0, 1, 2, 3}, map[int]bool{0: true, 1: true, 2: true}, true, []verdict.UnreadRanks{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Run(context.Background(), Options{Path: step1, Expected: tt.expected, Ranks: tt.ranks})
			if err != nil {
				t.Fatal(err)
			}
			if v.Anomaly || v.Complete != tt.complete {
				t.Errorf("anomaly %v complete %v, want false %v", v.Anomaly, v.Complete, tt.complete)
			}
			if !slices.EqualFunc(v.Unread, tt.unread, func(a, b verdict.UnreadRanks) bool {
				return a.Step == b.Step && a.Reason == b.Reason && slices.Equal(a.Ranks, b.Ranks)
			}) {
				t.Errorf("unread %+v, want %+v", v.Unread, tt.unread)
			}
			if slices.Contains(v.NotDumped, 3) {
				t.Errorf("rank 3 is named not dumped: %v", v.NotDumped)
			}
		})
	}
}
