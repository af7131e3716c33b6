//go:build !unix

package outguard

import "io/fs"

// mayHaveOtherNames reports whether the file may have more than one hard
// link; where the link count is not known, it may.
func mayHaveOtherNames(fs.FileInfo) bool { return true }
