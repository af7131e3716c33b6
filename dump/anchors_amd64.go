//go:build amd64

package dump

import "golang.org/x/sys/cpu"

// anchorMasksAVX2 is in anchors_amd64.s.
//
//go:noescape
func anchorMasksAVX2(b *byte, blocks int, masks *uint32)

// haveAnchorMasks: the vector search runs on this CPU.
var haveAnchorMasks = cpu.X86.HasAVX2

// anchorMasks fills masks[j] for the 32-byte blocks at b[start+32j]
// (see anchorMasksAVX2); start must be at least 2, and b must hold two
// bytes past the last block.
func anchorMasks(b []byte, start, blocks int, masks []uint32) {
	if blocks == 0 {
		return
	}
	_ = b[start-2]
	_ = b[start+32*blocks+1]
	_ = masks[blocks-1]
	anchorMasksAVX2(&b[start], blocks, &masks[0])
}
