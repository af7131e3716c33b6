package ranklist

import "testing"

func TestRanks(t *testing.T) {
	if got := Name([]int{2}); got != "rank 2" {
		t.Errorf("Name = %q", got)
	}
	if got := Name([]int{3, 0, 1, 2, 8, 3}); got != "ranks 0-3,8" {
		t.Errorf("Name = %q", got)
	}
	if !Same([]int{1, 2, 2}, []int{2, 1}) || Same([]int{1}, []int{1, 2}) {
		t.Error("Same")
	}
	if !Overlap([]int{1, 5}, []int{5}) || Overlap([]int{1}, nil) {
		t.Error("Overlap")
	}
	if got := Keys(map[int]bool{3: true, 1: true}); len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("Keys = %v", got)
	}
}
