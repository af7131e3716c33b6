//go:build !amd64 && !arm64

package bytesearch

// haveAnchorMasks: no vector search on this architecture; the scalar
// search serves.
var haveAnchorMasks = false

// anchorMasks is never called where haveAnchorMasks is false.
func anchorMasks(b []byte, start, blocks int, out []uint64) int { return 0 }
