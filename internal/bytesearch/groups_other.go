//go:build !amd64

package bytesearch

// groupBlock is never called where haveNeedleMasks is false.
func groupBlock(b []byte, blocks int) int { return blocks }
