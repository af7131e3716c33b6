//go:build amd64

package dump

import "golang.org/x/sys/cpu"

// anchorMasksAVX2 is in anchors_amd64.s.
//
//go:noescape
func anchorMasksAVX2(b *byte, blocks int, out *uint64) int

// haveAnchorMasks: the vector search runs on this CPU.
var haveAnchorMasks = cpu.X86.HasAVX2

// anchorMasks appends to out, for each 32-byte block j at b[start+32j]
// that holds an anchor, j<<32 | its mask (see anchorMasksAVX2), and returns
// how many; out must hold blocks values, start must be at least 2, and b
// must hold two bytes past the last block.
func anchorMasks(b []byte, start, blocks int, out []uint64) int {
	if blocks == 0 {
		return 0
	}
	_ = b[start-2]
	_ = b[start+32*blocks+1]
	_ = out[blocks-1]
	return anchorMasksAVX2(&b[start], blocks, &out[0])
}
