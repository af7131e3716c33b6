package repro

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// caseWriter writes the files of a case folder all or nothing: each file is
// written whole to a temporary file in the folder first, and commit renames
// them into place once every one was written; abort removes them (and the
// folder when it made it). A failed or interrupted run leaves no partial
// file behind.
type caseWriter struct {
	dir     string
	madeDir bool
	staged  []stagedFile
}

// stagedFile is a file written to tmp, to be renamed to final.
type stagedFile struct{ tmp, final string }

// newCaseWriter makes the case folder when it is absent.
func newCaseWriter(dir string) (*caseWriter, error) {
	w := &caseWriter{dir: dir}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		w.madeDir = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the case folder: %w", err)
	}
	return w, nil
}

// add writes the file name of the case through fill into a temporary file,
// with mode; the file is synced and closed. On failure nothing of it is
// left, and the error names the file.
func (w *caseWriter) add(name string, mode fs.FileMode, fill func(f *os.File) error) error {
	final := filepath.Join(w.dir, name)
	tmp, err := os.CreateTemp(w.dir, "."+name+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", final, err)
	}
	err = fill(tmp)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", final, withoutTemp(err, tmp.Name()))
	}
	w.staged = append(w.staged, stagedFile{tmp: tmp.Name(), final: final})
	return nil
}

// withoutTemp drops the temporary file's name from an error of a write to
// it: the message names the file of the case instead.
func withoutTemp(err error, tmp string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == tmp {
		return pe.Err
	}
	return err
}

// addBytes adds a file of the case holding b.
func (w *caseWriter) addBytes(name string, mode fs.FileMode, b []byte) error {
	return w.add(name, mode, func(f *os.File) error {
		_, err := f.Write(b)
		return err
	})
}

// commit renames every written file into place. When a rename fails, the
// files not yet renamed stay staged for abort, and the error names the file.
func (w *caseWriter) commit() error {
	for i, s := range w.staged {
		if err := os.Rename(s.tmp, s.final); err != nil {
			w.staged = w.staged[i:]
			return fmt.Errorf("write %s: %w", s.final, err)
		}
	}
	w.staged = nil
	return nil
}

// abort removes the files written and not renamed, and the case folder
// when this run made it and it is left empty.
func (w *caseWriter) abort() {
	for _, s := range w.staged {
		os.Remove(s.tmp)
	}
	w.staged = nil
	if w.madeDir {
		os.Remove(w.dir)
	}
}

// copyChunk is the size of one read of a tensor file copy.
const copyChunk = 1 << 20

// copyTo copies src into dst, checking ctx before each read (a signal
// stops a copy of gigabytes within one read). Its errors say which side
// failed: reading src or writing dst.
func copyTo(ctx context.Context, dst io.Writer, src io.Reader, srcName string) error {
	buf := make([]byte, copyChunk)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := src.Read(buf)
		if n > 0 {
			if _, err := dst.Write(buf[:n]); err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("read %s: %w", srcName, rerr)
		}
	}
}
