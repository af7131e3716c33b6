package watch

import (
	"math/rand"
	"testing"
)

// stepSet answers as a plain set does, whatever order the steps come in.
func TestStepSetMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		var ss stepSet
		plain := map[int]bool{}
		for n := rng.Intn(40); n > 0; n-- {
			s := rng.Intn(30)
			ss.add(s)
			plain[s] = true
			for q := -1; q <= 31; q++ {
				if ss.has(q) != plain[q] {
					t.Fatalf("round %d: has(%d) = %v, want %v (%v)", round, q, ss.has(q), plain[q], ss)
				}
				b, a := ss.around(q)
				wb, wa := plainAround(plain, q)
				if !sameStep(b, wb) || !sameStep(a, wa) {
					t.Fatalf("round %d: around(%d) = %v, %v, want %v, %v (%v)", round, q, b, a, wb, wa, ss)
				}
			}
			for i := 1; i < len(ss); i++ {
				if ss[i].from <= ss[i-1].to+1 {
					t.Fatalf("round %d: runs %v not disjoint and apart", round, ss)
				}
			}
		}
	}
}

func plainAround(set map[int]bool, s int) (before, after *int) {
	for p := range set {
		switch {
		case p < s && (before == nil || p > *before):
			before = &p
		case p > s && (after == nil || p < *after):
			after = &p
		}
	}
	return before, after
}

func sameStep(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
