//go:build amd64

package jsonlex

// closeCandidateAVX2 is in closeline_amd64.s.
//
//go:noescape
func closeCandidateAVX2(b *byte, blocks int, dist int, last byte) int

// haveCloseVector: closeCandidate searches 32 bytes at a time on this CPU.
var haveCloseVector = cpuHasAVX2()

// closeCandidate returns the first i >= from with b[i] == last and
// b[i-dist] == '\n', or -1; from >= dist > 0.
func closeCandidate(b []byte, from, dist int, last byte) int {
	if haveCloseVector {
		if blocks := (len(b) - from) / 32; blocks > 0 {
			_ = b[from-dist]
			if i := closeCandidateAVX2(&b[from], blocks, dist, last); i >= 0 {
				return from + i
			}
			from += 32 * blocks
		}
	}
	return closeCandidateGeneric(b, from, dist, last)
}

// setCloseVector lets tests and benchmarks run the plain Go path; it
// returns the setting it replaces.
func setCloseVector(on bool) (was bool) {
	was, haveCloseVector = haveCloseVector, on && cpuHasAVX2()
	return was
}
