package dump

import (
	"strings"

	"github.com/nanhunt/nanhunt/internal/notation"
)

// ParseRanges reads a list like "0,3-7" (the syntax of msprobe's config and
// of nanhunt's --steps and --ranks) into a set.
func ParseRanges(s string) (map[int]bool, error) { return notation.ParseRanges(s) }

// FormatRanges writes integers compactly, sorted: [0 1 2 5 7 8] -> "0-2,5,7,8".
func FormatRanges(v []int) string { return notation.FormatRanges(v) }

// writeRun adds the numbers from..to to a list of ranges (notation.WriteRun).
func writeRun(b *strings.Builder, from, to int) { notation.WriteRun(b, from, to) }
