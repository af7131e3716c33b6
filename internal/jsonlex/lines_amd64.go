//go:build amd64

package jsonlex

// indexAfterNewlineAVX2 and lastIndexAfterNewlineAVX2 are in
// lines_amd64.s.
//
//go:noescape
func indexAfterNewlineAVX2(b *byte, blocks int, dist int, last byte) int

//go:noescape
func lastIndexAfterNewlineAVX2(b *byte, blocks int, dist int, last byte) int

// haveLineVector: the line searches look at 32 bytes at a time here.
var haveLineVector = cpuHasAVX2()

// IndexAfterNewline returns the first i >= from with b[i] == last and
// b[i-dist] == '\n', or -1: where a line "\n" + dist-1 bytes + last ends
// (the bytes between are the caller's to check). from >= dist > 0.
func IndexAfterNewline(b []byte, from, dist int, last byte) int {
	if haveLineVector {
		if blocks := (len(b) - from) / 32; blocks > 0 {
			_ = b[from-dist]
			if i := indexAfterNewlineAVX2(&b[from], blocks, dist, last); i >= 0 {
				return from + i
			}
			from += 32 * blocks
		}
	}
	return indexAfterNewlineGeneric(b, from, dist, last)
}

// LastIndexAfterNewline returns the last i in [dist, hi) with b[i] == last
// and b[i-dist] == '\n', or -1; dist > 0.
func LastIndexAfterNewline(b []byte, hi, dist int, last byte) int {
	if haveLineVector {
		if blocks := (hi - dist) / 32; blocks > 0 {
			lo := hi - 32*blocks
			_ = b[lo-dist]
			_ = b[hi-1]
			if i := lastIndexAfterNewlineAVX2(&b[lo], blocks, dist, last); i >= 0 {
				return lo + i
			}
			hi = lo
		}
	}
	return lastIndexAfterNewlineGeneric(b, dist, hi, dist, last)
}

// setLineVector lets tests and benchmarks run the plain Go paths; it
// returns the setting it replaces.
func setLineVector(on bool) (was bool) {
	was, haveLineVector = haveLineVector, on && cpuHasAVX2()
	return was
}
