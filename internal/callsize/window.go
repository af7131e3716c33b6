package callsize

import (
	"io"
)

// windowedReaderAt is an io.ReaderAt that reads its source a window at a
// time and answers reads that fall inside the window from memory. The
// parse of the entries a search found reads each in small pieces, and the
// entries of one op often follow each other kilobytes apart: one read
// system call a window, instead of one a piece.
type windowedReaderAt struct {
	ra   io.ReaderAt
	size int64  // the source's size: a window never reads past it
	buf  []byte // the window's bytes
	off  int64  // where the window starts in the source
}

func newWindowedReaderAt(ra io.ReaderAt, size int64, window int) *windowedReaderAt {
	return &windowedReaderAt{ra: ra, size: size, buf: make([]byte, 0, window)}
}

// ReadAt reads len(p) bytes at off: from the window when it holds them
// all, else from a window read again at off (or from the source directly,
// for a read longer than a window). It returns the source's own error
// past the end.
func (w *windowedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= w.off && off+int64(len(p)) <= w.off+int64(len(w.buf)) {
		return copy(p, w.buf[off-w.off:]), nil
	}
	if len(p) > cap(w.buf) || off < 0 || off >= w.size {
		return w.ra.ReadAt(p, off)
	}
	n, err := w.ra.ReadAt(w.buf[:min(int64(cap(w.buf)), w.size-off)], off)
	w.off, w.buf = off, w.buf[:n]
	if n >= len(p) {
		return copy(p, w.buf), nil
	}
	copy(p, w.buf)
	if err == nil {
		err = io.EOF
	}
	return n, err
}
