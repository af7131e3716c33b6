//go:build amd64

package bytesearch

import "golang.org/x/sys/cpu"

// needleBlockAVX2 is in needles_amd64.s.
//
//go:noescape
func needleBlockAVX2(b *byte, blocks int) int

// needleBlockAVX512 is in needles_amd64.s.
//
//go:noescape
func needleBlockAVX512(b *byte, blocks int) int

// haveNeedleMasks: the vector needle search runs on this CPU; needle512:
// with AVX-512 (tests turn it off to compare).
var (
	haveNeedleMasks = cpu.X86.HasAVX2
	needle512       = haveAVX512
)

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
	if !needle512 || n < 2 {
		return needleBlockAVX2(&b[32*from], n)
	}
	// 64 bytes at a time: a pair that may hold a needle is reported by its
	// first block, which the caller looks at before going on from the next
	if j := 2 * needleBlockAVX512(&b[32*from], n/2); j < n-n%2 {
		return j
	}
	if n%2 == 1 {
		return n - 1 + needleBlockAVX2(&b[32*(blocks-1)], 1)
	}
	return n
}
