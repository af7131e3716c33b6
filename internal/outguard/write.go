package outguard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// newFileMode is the mode of a file WriteFile creates.
const newFileMode fs.FileMode = 0o644

// WriteFile writes what write produces to path through a temporary file in
// path's folder, renamed over path once everything was written and synced:
// a failed write leaves the old file as it was and removes the temporary
// file. A file that cannot be opened for writing is not replaced. A
// symbolic link is written through (the file it names is
// replaced, the link stays). A file that is not a regular one, such as
// /dev/null, is written in place; a folder is refused. WriteFile does not
// check where path lies: Guard.Check does, first.
func WriteFile(path string, write func(io.Writer) error) error {
	return WriteFileChecked(path, write, nil)
}

// WriteFileChecked is WriteFile, with check called once the temporary file
// is written and synced, just before it is renamed over path: when check
// fails, nothing is renamed, the temporary file is removed and its error
// returned. Another process may have written path while this one wrote
// its temporary file; check is where the caller looks again.
func WriteFileChecked(path string, write func(io.Writer) error, check func() error) error {
	target := path
	if li, err := os.Lstat(path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if r, err := filepath.EvalSymlinks(path); err == nil {
			target = r
		}
	}
	mode := newFileMode
	info, err := os.Stat(target)
	switch {
	case err == nil && info.IsDir():
		return fmt.Errorf("write %s: it is a folder", path)
	case err == nil && !info.Mode().IsRegular():
		return writeInPlace(path, target, write)
	case err == nil:
		// replacing a file the user may not write to would bypass its mode
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return pathError(path, err)
		}
		f.Close()
		mode = info.Mode().Perm()
	case !absent(err):
		return pathError(path, err)
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return pathError(path, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(namedWriter{tmp, path}, 256<<10)
	if err := write(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return pathError(path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return pathError(path, err)
	}
	if err := tmp.Sync(); err != nil {
		return pathError(path, err)
	}
	if err := tmp.Close(); err != nil {
		return pathError(path, err)
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return pathError(path, err)
	}
	done = true
	return nil
}

// writeInPlace writes to a device or a pipe, which cannot be replaced.
func writeInPlace(path, target string, write func(io.Writer) error) error {
	f, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		return pathError(path, err)
	}
	bw := bufio.NewWriter(f)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// namedWriter writes to a temporary file and names in its errors the file
// the user gave: the temporary one is gone once the write failed.
type namedWriter struct {
	f    *os.File
	path string
}

func (w namedWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = pathError(w.path, err)
	}
	return n, err
}

// pathError names the file the user gave, not the temporary one, with the
// system's reason.
func pathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: "write", Path: path, Err: err}
}
