//go:build !amd64

package dump

// lastLineCandidate returns the last i in [dist, hi) with b[i] == last and
// b[i-dist] == '\n', or -1; dist > 0.
func lastLineCandidate(b []byte, hi, dist int, last byte) int {
	return lastLineCandidateGeneric(b, dist, hi, dist, last)
}

// haveLineVector: no vector line search on this architecture.
var haveLineVector = false
