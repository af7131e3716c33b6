//go:build amd64

package bytesearch

// aheadMasksAVX2 is in ahead_amd64.s.
//
//go:noescape
func aheadMasksAVX2(b *byte, blocks int, out *uint64) int

// haveAheadMasks: the vector search for watched values runs on this CPU.
var haveAheadMasks = haveAnchorMasks

// aheadMasks appends to out, for each 32-byte block j at b[start+32j] that
// holds a mark (aheadMark), j<<32 | its mask, and returns how many; start
// must be at least 4 and b must hold three bytes past the last block.
func aheadMasks(b []byte, start, blocks int, out []uint64) int {
	if blocks == 0 {
		return 0
	}
	_ = b[start-4]
	_ = b[start+32*blocks+2]
	_ = out[blocks-1]
	return aheadMasksAVX2(&b[start], blocks, &out[0])
}
