//go:build amd64

package dump

import "golang.org/x/sys/cpu"

// needleBlockAVX2 is in needles_amd64.s.
//
//go:noescape
func needleBlockAVX2(b *byte, blocks int) int

// haveNeedleMasks: the vector needle search runs on this CPU.
var haveNeedleMasks = cpu.X86.HasAVX2

// needleBlock returns how many of the 32-byte blocks b[32*from:],
// b[32*(from+1)]:, ... up to block blocks come before the first that may
// hold the start of a backward needle (blocks-from when none may); b must
// hold needleTail bytes past the last block.
func needleBlock(b []byte, from, blocks int) int {
	n := blocks - from
	if n <= 0 {
		return 0
	}
	_ = b[32*blocks+needleTail-1]
	return needleBlockAVX2(&b[32*from], n)
}
