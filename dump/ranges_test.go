package dump

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// gapRangesByList is gapRanges by its definition: list every missing
// number, then name them as ranges.
func gapRangesByList(sorted []int, lo, hi int) string {
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
		{[]int{0, MaxFolderNumber}, 0, MaxFolderNumber, "1-999999998"},
	} {
		if got := gapRanges(c.sorted, c.lo, c.hi); got != c.want {
			t.Errorf("gapRanges(%v, %d, %d) = %q, want %q", c.sorted, c.lo, c.hi, got, c.want)
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
		if got, want := gapRanges(xs, lo, hi), gapRangesByList(xs, lo, hi); got != want {
			t.Fatalf("gapRanges(%v, %d, %d) = %q, want %q", xs, lo, hi, got, want)
		}
	}
}

// A folder number is bounded: past nine digits it is no folder msprobe
// writes, and the gaps are said as ranges however far apart the steps are.
func TestFolderNumbersBounded(t *testing.T) {
	for name, want := range map[string]bool{
		"step999999999": true, "step1000000000": false, "step9223372036854775807": false,
		"rank18446744073709551616": false, "rank7": true,
	} {
		_, ok := Numbered(name, name[:4])
		if ok != want {
			t.Errorf("Numbered(%q) ok = %v, want %v", name, ok, want)
		}
	}
	dirs := []RankDir{{Step: 0, Rank: 0}, {Step: MaxFolderNumber, Rank: 0}, {Step: MaxFolderNumber, Rank: MaxFolderNumber}}
	got := Gaps(dirs)
	want := []string{"steps 1-999999998 not dumped (between step 0 and step 999999999)", "step 0: ranks 1-999999999 not dumped", "step 999999999: ranks 1-999999998 not dumped"}
	if !slices.Equal(got, want) {
		t.Errorf("Gaps = %q, want %q", got, want)
	}
}
