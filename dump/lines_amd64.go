//go:build amd64

package dump

// lastLineCandidateAVX2 is in lines_amd64.s.
//
//go:noescape
func lastLineCandidateAVX2(b *byte, blocks int, dist int, last byte) int

// haveLineVector: lastLineCandidate searches 32 bytes at a time here.
var haveLineVector = haveAnchorMasks

// lastLineCandidate returns the last i in [dist, hi) with b[i] == last and
// b[i-dist] == '\n', or -1; dist > 0.
func lastLineCandidate(b []byte, hi, dist int, last byte) int {
	if haveLineVector {
		if blocks := (hi - dist) / 32; blocks > 0 {
			lo := hi - 32*blocks
			_ = b[lo-dist]
			_ = b[hi-1]
			if i := lastLineCandidateAVX2(&b[lo], blocks, dist, last); i >= 0 {
				return lo + i
			}
			hi = lo
		}
	}
	return lastLineCandidateGeneric(b, dist, hi, dist, last)
}
