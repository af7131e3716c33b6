package jsonlex

import "bytes"

// indexAfterNewlineGeneric is IndexAfterNewline on any CPU, and what the
// vector search is tested against: last is rare in indented JSON (a
// closing bracket or a name's quote after the indentation), so it is
// looked for first.
func indexAfterNewlineGeneric(b []byte, from, dist int, last byte) int {
	for from < len(b) {
		i := bytes.IndexByte(b[from:], last)
		if i < 0 {
			return -1
		}
		if at := from + i; b[at-dist] == '\n' {
			return at
		}
		from += i + 1
	}
	return -1
}

// lastIndexAfterNewlineGeneric is LastIndexAfterNewline over [lo, hi) on
// any CPU; lo >= dist.
func lastIndexAfterNewlineGeneric(b []byte, lo, hi, dist int, last byte) int {
	for hi > lo {
		i := bytes.LastIndexByte(b[lo:hi], last)
		if i < 0 {
			return -1
		}
		if at := lo + i; b[at-dist] == '\n' {
			return at
		}
		hi = lo + i
	}
	return -1
}

// closeLineEnd returns the end of the first close in b that starts at or
// after from, or -1; close starts with '\n'. It looks for close's last
// byte where the byte len(close)-1 before it is a newline
// (IndexAfterNewline, 32 bytes at a time where the CPU can), then compares
// the whole line.
func closeLineEnd(b []byte, from int, close []byte) int {
	dist := len(close) - 1
	if dist < 1 {
		return -1 // not a line: SkipObjectLines' callers pass "\n", spaces, "}"
	}
	for k := from + dist; k < len(b); {
		i := IndexAfterNewline(b, k, dist, close[dist])
		if i < 0 {
			return -1
		}
		if bytes.Equal(b[i-dist:i+1], close) {
			return i + 1
		}
		k = i + 1
	}
	return -1
}
