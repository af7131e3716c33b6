//go:build !amd64

package jsonlex

// IndexAfterNewline returns the first i >= from with b[i] == last and
// b[i-dist] == '\n', or -1: where a line "\n" + dist-1 bytes + last ends
// (the bytes between are the caller's to check). from >= dist > 0.
func IndexAfterNewline(b []byte, from, dist int, last byte) int {
	return indexAfterNewlineGeneric(b, from, dist, last)
}

// LastIndexAfterNewline returns the last i in [dist, hi) with b[i] == last
// and b[i-dist] == '\n', or -1; dist > 0.
func LastIndexAfterNewline(b []byte, hi, dist int, last byte) int {
	return lastIndexAfterNewlineGeneric(b, dist, hi, dist, last)
}

func setLineVector(bool) bool { return false }
