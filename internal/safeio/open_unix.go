//go:build unix

package safeio

import (
	"os"
	"syscall"
)

func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

func identity(info os.FileInfo) Identity {
	id := Identity{Size: info.Size(), ModTime: info.ModTime().UnixNano()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		id.Dev, id.Ino = uint64(st.Dev), uint64(st.Ino)
	}
	return id
}
