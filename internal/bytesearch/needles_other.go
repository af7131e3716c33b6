//go:build !amd64

package bytesearch

// haveNeedleMasks: no vector needle search on this architecture.
var haveNeedleMasks = false

// needleBlock is never called where haveNeedleMasks is false.
func needleBlock(b []byte, from, blocks int) int { return blocks - from }
