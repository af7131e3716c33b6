package dump

import (
	"bytes"
	"fmt"
	"io"
)

// EntryAt reads single entries again from their byte ranges (Entry.Offset,
// Entry.End) in a dump.json, reusing its buffers from call to call.
type EntryAt struct {
	buf []byte
	br  bytes.Reader
	r   *Reader
	opt ReaderOptions
}

// NewEntryAt returns an EntryAt that reads with the given options (Select
// is ignored).
func NewEntryAt(opt ReaderOptions) *EntryAt {
	opt.Select = nil
	if opt.WindowSize == 0 {
		opt.WindowSize = 64 << 10
	}
	return &EntryAt{opt: opt}
}

const (
	entryPrefix = `{"data":{`
	entrySuffix = `}}`
)

// Parse parses an entry from its bytes (as Reader.Raw returns them),
// which start at the given offset of the file.
func (x *EntryAt) Parse(raw []byte, offset int64) (*Entry, error) {
	x.buf = append(append(append(x.buf[:0], entryPrefix...), raw...), entrySuffix...)
	return x.parse(offset)
}

// Read parses the entry in [offset, end) of ra. The entry is valid until the
// next call; its Offset and End are those of the file, its Index 0.
func (x *EntryAt) Read(ra io.ReaderAt, offset, end int64) (*Entry, error) {
	if end <= offset || end-offset > 1<<30 {
		return nil, fmt.Errorf("bad entry range %d-%d", offset, end)
	}
	n := int(end - offset)
	need := len(entryPrefix) + n + len(entrySuffix)
	if cap(x.buf) < need {
		x.buf = make([]byte, need)
	}
	x.buf = x.buf[:need]
	copy(x.buf, entryPrefix)
	if _, err := ra.ReadAt(x.buf[len(entryPrefix):len(entryPrefix)+n], offset); err != nil && err != io.EOF {
		return nil, fmt.Errorf("read entry at offset %d: %w", offset, err)
	}
	copy(x.buf[len(entryPrefix)+n:], entrySuffix)
	return x.parse(offset)
}

func (x *EntryAt) parse(offset int64) (*Entry, error) {
	x.br.Reset(x.buf)
	if x.r == nil {
		x.r = NewReader(&x.br, x.opt)
	} else {
		x.r.Reset(&x.br)
	}
	if !x.r.Next() {
		if err := x.r.Err(); err != nil {
			return nil, fmt.Errorf("entry at offset %d: %w", offset, err)
		}
		return nil, fmt.Errorf("no entry at offset %d", offset)
	}
	e := x.r.Entry()
	shift := offset - int64(len(entryPrefix))
	e.Offset += shift
	e.End += shift
	return e, nil
}
