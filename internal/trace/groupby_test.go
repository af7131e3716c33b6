package trace

import (
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
)

func TestGroupBy(t *testing.T) {
	dirs := func(steps ...int) []dump.RankDir {
		var out []dump.RankDir
		for i, s := range steps {
			out = append(out, dump.RankDir{Step: s, Rank: i})
		}
		return out
	}
	tests := []struct {
		name   string
		dirs   []dump.RankDir
		step   int
		ranks  []int
		shared bool // a part of dirs, not a copy
	}{
		{"together", dirs(0, 0, 1, 1, 1, 2), 1, []int{2, 3, 4}, true},
		{"first", dirs(0, 0, 1), 0, []int{0, 1}, true},
		{"last", dirs(0, 1, 1), 1, []int{1, 2}, true},
		{"apart", dirs(1, 0, 1, 2, 1), 1, []int{0, 2, 4}, false},
		{"absent", dirs(0, 1), 5, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, groups := groupBy(tt.dirs, func(d *dump.RankDir) int { return d.Step })
			var firsts []int
			for _, d := range tt.dirs {
				if !slices.Contains(firsts, d.Step) {
					firsts = append(firsts, d.Step)
				}
			}
			if !slices.Equal(keys, firsts) {
				t.Fatalf("keys %v, want %v", keys, firsts)
			}
			got := groups[tt.step]
			var ranks []int
			for _, d := range got {
				ranks = append(ranks, d.Rank)
			}
			if !slices.Equal(ranks, tt.ranks) {
				t.Fatalf("ranks %v, want %v", ranks, tt.ranks)
			}
			if len(got) > 0 {
				shared := &got[0] == &tt.dirs[tt.ranks[0]]
				if shared != tt.shared {
					t.Errorf("shares dirs: %v, want %v", shared, tt.shared)
				}
				if shared && cap(got) != len(got) {
					t.Errorf("cap %d > len %d: an append would write over the next group", cap(got), len(got))
				}
			}
		})
	}
}
