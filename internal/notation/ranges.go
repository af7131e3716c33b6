package notation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseRanges reads a list like "0,3-7" (the syntax of msprobe's config and
// of nanhunt's --steps and --ranks) into a set.
func ParseRanges(s string) (map[int]bool, error) {
	set := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad range %q: want N or N-M", part)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(strings.TrimSpace(hi))
			if err != nil || b < a {
				return nil, fmt.Errorf("bad range %q: want N or N-M with N <= M", part)
			}
		}
		if b-a > 1<<20 {
			return nil, fmt.Errorf("range %q is too large", part)
		}
		for i := a; i <= b; i++ {
			set[i] = true
		}
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("empty range list %q", s)
	}
	return set, nil
}

// FormatRanges writes integers compactly, sorted: [0 1 2 5 7 8] -> "0-2,5,7,8".
func FormatRanges(v []int) string {
	s := append([]int(nil), v...)
	slices.Sort(s)
	s = slices.Compact(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		WriteRun(&b, s[i], s[j])
		i = j + 1
	}
	return b.String()
}

// WriteRun adds the numbers from..to to a list of ranges: "7", "7,8",
// "7-9", after a comma when the list is not empty.
func WriteRun(b *strings.Builder, from, to int) {
	if b.Len() > 0 {
		b.WriteByte(',')
	}
	b.WriteString(strconv.Itoa(from))
	switch {
	case to == from:
	case to == from+1:
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(to))
	default:
		b.WriteByte('-')
		b.WriteString(strconv.Itoa(to))
	}
}

// MissingRanges names the numbers from lo to hi that sorted does not hold,
// as ranges ("3-5,9"), without listing them: a gap may be a billion long.
func MissingRanges(sorted []int, lo, hi int) string {
	var b strings.Builder
	add := func(from, to int) {
		if from <= to {
			WriteRun(&b, from, to)
		}
	}
	next := lo
	for _, x := range sorted {
		if x < next {
			continue // a repeat
		}
		add(next, min(x-1, hi))
		next = x + 1
	}
	add(next, hi)
	return b.String()
}
