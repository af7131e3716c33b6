package trainlog

import (
	"math/rand/v2"
	"testing"
)

// TestIvsetAgainstMap checks the interval set against a plain map.
func TestIvsetAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for round := 0; round < 200; round++ {
		var s, o ivset
		set := map[int]bool{}
		for i := 0; i < rng.IntN(60); i++ {
			x := rng.IntN(40) - 5
			if rng.IntN(3) == 0 {
				o.add(x)
			} else {
				s.add(x)
			}
			set[x] = true
		}
		s.union(&o)
		for i := 1; i < len(s.iv); i++ {
			if s.iv[i][0] <= s.iv[i-1][1]+1 || s.iv[i][0] > s.iv[i][1] {
				t.Fatalf("intervals not disjoint and sorted: %v", s.iv)
			}
		}
		for x := -10; x < 45; x++ {
			if s.has(x) != set[x] {
				t.Fatalf("has(%d) = %v, want %v (%v)", x, s.has(x), set[x], s.iv)
			}
			want, wantOK := 0, false
			for y := range set {
				if y < x && (!wantOK || y > want) {
					want, wantOK = y, true
				}
			}
			if got, ok := s.maxBelow(x); ok != wantOK || got != want {
				t.Fatalf("maxBelow(%d) = %d, %v; want %d, %v (%v)", x, got, ok, want, wantOK, s.iv)
			}
		}
	}
}
