//go:build arm64

package bytesearch

// anchorMasksNEON is in anchors_arm64.s.
//
//go:noescape
func anchorMasksNEON(b *byte, blocks int, out *uint64) int

// haveAnchorMasks: every arm64 CPU has the NEON (Advanced SIMD) registers
// the vector search uses.
var haveAnchorMasks = true

// anchorMasks appends to out, for each 32-byte block j at b[start+32j]
// that holds an anchor, j<<32 | its mask (see anchorMasksNEON), and returns
// how many; out must hold blocks values, start must be at least 2, and b
// must hold two bytes past the last block.
func anchorMasks(b []byte, start, blocks int, out []uint64) int {
	if !anchorArgs(b, start, blocks, out) {
		return 0
	}
	return anchorMasksNEON(&b[start], blocks, &out[0])
}
