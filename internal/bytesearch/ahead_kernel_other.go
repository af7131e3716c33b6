//go:build !amd64

package bytesearch

// haveAheadMasks: no vector search for watched values on this
// architecture; the scalar search serves.
var haveAheadMasks = false

// aheadMasks is never called where haveAheadMasks is false.
func aheadMasks(b []byte, start, blocks int, out []uint64) int { return 0 }
