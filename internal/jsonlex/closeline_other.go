//go:build !amd64

package jsonlex

// closeCandidate returns the first i >= from with b[i] == last and
// b[i-dist] == '\n', or -1; from >= dist > 0.
func closeCandidate(b []byte, from, dist int, last byte) int {
	return closeCandidateGeneric(b, from, dist, last)
}

func setCloseVector(bool) bool { return false }
