//go:build amd64

package bytesearch

import "golang.org/x/sys/cpu"

// anchorMasksAVX2 is in anchors_amd64.s.
//
//go:noescape
func anchorMasksAVX2(b *byte, blocks int, out *uint64) int

// anchorMasksAVX512 is in anchors_amd64.s.
//
//go:noescape
func anchorMasksAVX512(b *byte, blocks int, out *uint64) int

// haveAnchorMasks: the vector search runs on this CPU; haveAVX512: with
// 64-byte vectors; haveVBMI: with byte table look-ups (anchorMasksVBMI).
var (
	haveAnchorMasks = cpu.X86.HasAVX2
	haveAVX512      = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW
	haveVBMI        = haveAVX512 && cpu.X86.HasAVX512VBMI
)

// anchorMasks appends to out, for each 32-byte block j at b[start+32j]
// that holds an anchor, j<<32 | its mask (see anchorMasksAVX2), and returns
// how many; out must hold blocks values, start must be at least 2, and b
// must hold two bytes past the last block.
func anchorMasks(b []byte, start, blocks int, out []uint64) int {
	if haveVBMI {
		return anchorMasksTable(b, start, blocks, out)
	}
	if haveAVX512 {
		return anchorMasks512(b, start, blocks, out)
	}
	return anchorMasks256(b, start, blocks, out)
}

// anchorMasks256 is anchorMasks with AVX2.
func anchorMasks256(b []byte, start, blocks int, out []uint64) int {
	if !anchorArgs(b, start, blocks, out) {
		return 0
	}
	return anchorMasksAVX2(&b[start], blocks, &out[0])
}

// anchorMasks512 is anchorMasks with AVX-512, two blocks at a time; an
// odd last block goes to AVX2.
func anchorMasks512(b []byte, start, blocks int, out []uint64) int {
	return anchorMasksPairs(b, start, blocks, out, anchorMasksAVX512)
}

// anchorMasksPairs runs a kernel of 64-byte blocks (handed back as their
// two halves, in anchorMasksAVX2's format) over the pairs of blocks, and
// the odd last block through AVX2.
func anchorMasksPairs(b []byte, start, blocks int, out []uint64, pairs func(b *byte, n int, out *uint64) int) int {
	if !anchorArgs(b, start, blocks, out) {
		return 0
	}
	n := 0
	if blocks >= 2 {
		n = pairs(&b[start], blocks/2, &out[0])
	}
	if last := blocks - 1; blocks%2 == 1 && anchorMasksAVX2(&b[start+32*last], 1, &out[n]) == 1 {
		out[n] |= uint64(last) << 32
		n++
	}
	return n
}
