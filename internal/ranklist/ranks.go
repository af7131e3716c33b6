package ranklist

import (
	"fmt"
	"slices"

	"github.com/nanhunt/nanhunt/internal/intranges"
)

// Name names ranks for people: "rank 2", "ranks 0-3,8".
func Name(ranks []int) string {
	u := Unique(ranks)
	if len(u) == 1 {
		return fmt.Sprintf("rank %d", u[0])
	}
	return "ranks " + intranges.Format(u)
}

// Unique returns the numbers sorted, each once, in a new slice.
func Unique(v []int) []int {
	out := slices.Clone(v)
	slices.Sort(out)
	return slices.Compact(out)
}

// Same reports whether a and b hold the same numbers.
func Same(a, b []int) bool { return slices.Equal(Unique(a), Unique(b)) }

// Overlap reports whether a and b share a number.
func Overlap(a, b []int) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// Keys returns the sorted keys of a map keyed by rank.
func Keys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
