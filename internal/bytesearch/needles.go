package bytesearch

import "bytes"

// needleTail is how many bytes past a block the vector needle search
// reads: "meters_grad" is eleven long.
const needleTail = 10

// hasBackwardNeedle reports whether b holds one of backwardNeedles: when no
// part of a file does, no name in it is backward (MayBeBackward), and
// LastEntry need not read it.
func hasBackwardNeedle(b []byte, vector bool) bool {
	k := 0
	if vector && haveNeedleMasks {
		for blocks := (len(b) - needleTail) / 32; k/32 < blocks; {
			j := k/32 + needleBlock(b, k/32, blocks)
			if j >= blocks {
				k = 32 * blocks
				break
			}
			if needleIn(b[32*j : 32*j+32+needleTail]) {
				return true
			}
			k = 32 * (j + 1)
		}
		// the last bytes, and the needles that start in them
		return hasNeedleScalar(b[max(0, k-needleTail):])
	}
	return hasNeedleScalar(b)
}

// needleIn reports whether a needle starts in the first 32 bytes of b (a
// block and the bytes after it).
func needleIn(b []byte) bool {
	for i := range 32 {
		for _, nd := range backwardNeedles {
			if bytes.HasPrefix(b[i:], nd) {
				return true
			}
		}
	}
	return false
}

// hasNeedleScalar is the plain rule: one search per needle.
func hasNeedleScalar(b []byte) bool {
	for _, nd := range backwardNeedles {
		if bytes.Contains(b, nd) {
			return true
		}
	}
	return false
}
