//go:build amd64

package bytesearch

// groupBlockAVX2 is in groups_amd64.s.
//
//go:noescape
func groupBlockAVX2(b *byte, blocks int) int

// groupBlock returns how many of the 32-byte blocks of b come before the
// first that may hold the start of "group_ranks" (blocks when none may),
// b holding groupTail bytes past its last block.
func groupBlock(b []byte, blocks int) int {
	if blocks <= 0 {
		return 0
	}
	_ = b[32*blocks+groupTail-1]
	return groupBlockAVX2(&b[0], blocks)
}
