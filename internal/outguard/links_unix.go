//go:build unix

package outguard

import (
	"io/fs"
	"syscall"
)

// mayHaveOtherNames reports whether the file has more than one hard link:
// only then can another path be the same file.
func mayHaveOtherNames(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return !ok || st.Nlink > 1
}
