package safeio

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Open opens path for reading if it is a regular file (symbolic links are
// followed), and refuses anything else, saying what it is.
func Open(path string) (*os.File, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, info); err != nil {
		return nil, err
	}
	// Non-blocking, so that a FIFO swapped in after the check does not
	// block; the opened file is checked again.
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	if info, err := f.Stat(); err != nil {
		f.Close()
		return nil, err
	} else if err := regular(path, info); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads a whole regular file of at most max bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > max {
		return nil, fmt.Errorf("%s: %s, larger than the %s this file may be", path, Size(info.Size()), Size(max))
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: larger than the %s this file may be", path, Size(max))
	}
	return data, nil
}

// regular refuses what is not a regular file, naming its kind.
func regular(path string, info fs.FileInfo) error {
	m := info.Mode()
	if m.IsRegular() {
		return nil
	}
	return fmt.Errorf("%s: %s, not a regular file", path, Kind(m))
}

// Kind names a file mode for people.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file"
}

// Size writes a byte count for people: "3.7 MiB".
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Identity is what tells a file apart from a rewritten or replaced one:
// its device and inode, size and modification time.
type Identity struct {
	Dev, Ino uint64
	Size     int64
	ModTime  int64 // nanoseconds
}

// IdentityOf reads the identity of an open file.
func IdentityOf(f *os.File) (Identity, error) {
	info, err := f.Stat()
	if err != nil {
		return Identity{}, err
	}
	return identity(info), nil
}

// Changed reports whether the file at path is no longer the one whose
// identity was read (rewritten, replaced, removed), and says how.
func Changed(path string, was Identity) (bool, string) {
	info, err := os.Stat(path)
	if err != nil {
		return true, "it can no longer be read: " + err.Error()
	}
	now := identity(info)
	switch {
	case now.Dev != was.Dev || now.Ino != was.Ino:
		return true, "it was replaced by another file"
	case now.Size != was.Size:
		return true, fmt.Sprintf("its size went from %d to %d bytes", was.Size, now.Size)
	case now.ModTime != was.ModTime:
		return true, "it was written to"
	}
	return false, ""
}

// CancelReader reads r until ctx is done: each read first checks ctx, so a
// scan of a large file stops within one read of a Ctrl-C.
func CancelReader(ctx context.Context, r io.Reader) io.Reader { return cancelReader{ctx, r} }

type cancelReader struct {
	ctx context.Context
	r   io.Reader
}

func (c cancelReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
