package notation

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// missingByList is MissingRanges by its definition: list every missing
// number, then name them as ranges.
func missingByList(sorted []int, lo, hi int) string {
	var missing []int
	for x := lo; x <= hi; x++ {
		if !slices.Contains(sorted, x) {
			missing = append(missing, x)
		}
	}
	return FormatRanges(missing)
}

func TestGapRanges(t *testing.T) {
	for _, c := range []struct {
		sorted []int
		lo, hi int
		want   string
	}{
		{[]int{0, 1, 2}, 0, 2, ""},
		{[]int{0, 4}, 0, 4, "1-3"},
		{[]int{0, 2}, 0, 2, "1"},
		{[]int{0, 3}, 0, 3, "1,2"},
		{[]int{2, 2, 5}, 0, 6, "0,1,3,4,6"},
		{[]int{0, 999_999_999}, 0, 999_999_999, "1-999999998"},
	} {
		if got := MissingRanges(c.sorted, c.lo, c.hi); got != c.want {
			t.Errorf("MissingRanges(%v, %d, %d) = %q, want %q", c.sorted, c.lo, c.hi, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var xs []int
		for range r.IntN(8) {
			xs = append(xs, r.IntN(20))
		}
		slices.Sort(xs)
		lo, hi := 0, r.IntN(24)
		if got, want := MissingRanges(xs, lo, hi), missingByList(xs, lo, hi); got != want {
			t.Fatalf("MissingRanges(%v, %d, %d) = %q, want %q", xs, lo, hi, got, want)
		}
	}
}
