package intranges

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// missingByList is Missing by its definition: list every missing
// number, then name them as ranges.
func missingByList(sorted []int, lo, hi int) string {
	var missing []int
	for x := lo; x <= hi; x++ {
		if !slices.Contains(sorted, x) {
			missing = append(missing, x)
		}
	}
	return Format(missing)
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
		if got := Missing(c.sorted, c.lo, c.hi); got != c.want {
			t.Errorf("Missing(%v, %d, %d) = %q, want %q", c.sorted, c.lo, c.hi, got, c.want)
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
		if got, want := Missing(xs, lo, hi), missingByList(xs, lo, hi); got != want {
			t.Fatalf("Missing(%v, %d, %d) = %q, want %q", xs, lo, hi, got, want)
		}
	}
}

func TestRanges(t *testing.T) {
	set, err := Parse("0, 3-5,9")
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 5 || !set[0] || !set[4] || !set[9] || set[2] {
		t.Errorf("Parse = %v", set)
	}
	for _, bad := range []string{"", "a", "5-3", "-1", "1-", "0-99999999"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	for in, want := range map[string]string{"0,1,2,5,7,8": "0-2,5,7,8", "3": "3", "1,0,1": "0,1", "0,1,2,3,10,11,12": "0-3,10-12"} {
		s, _ := Parse(in)
		var v []int
		for k := range s {
			v = append(v, k)
		}
		if got := Format(v); got != want {
			t.Errorf("Format(%s) = %q, want %q", in, got, want)
		}
	}
}
