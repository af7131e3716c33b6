//go:build amd64 || arm64

package bytesearch

// anchorArgs checks what the kernels read and write (b[start-2] to
// b[start+32*blocks+1], out[:blocks]); false when there is nothing to do.
func anchorArgs(b []byte, start, blocks int, out []uint64) bool {
	if blocks == 0 {
		return false
	}
	_ = b[start-2]
	_ = b[start+32*blocks+1]
	_ = out[blocks-1]
	return true
}
