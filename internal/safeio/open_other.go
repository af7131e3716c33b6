//go:build !unix

package safeio

import "os"

func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }

func identity(info os.FileInfo) Identity {
	return Identity{Size: info.Size(), ModTime: info.ModTime().UnixNano()}
}
