package entryat

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
)

// Reader reads single entries again from their byte ranges (Entry.Offset,
// Entry.End) in a dump.json, reusing its buffers from call to call.
type Reader struct {
	buf   []byte
	br    bytes.Reader
	pre   strings.Reader
	post  strings.Reader
	sec   io.SectionReader
	multi [3]io.Reader
	r     *dump.Reader
	opt   dump.ReaderOptions
}

// New returns a Reader that reads with the given options (Select is
// ignored).
func New(opt dump.ReaderOptions) *Reader {
	opt.Select = nil
	if opt.WindowSize == 0 {
		opt.WindowSize = 64 << 10
	}
	return &Reader{opt: opt}
}

const (
	entryPrefix = `{"data":{`
	entrySuffix = `}}`
)

// Parse parses an entry from its bytes (as Reader.Raw returns them),
// which start at the given offset of the file.
func (x *Reader) Parse(raw []byte, offset int64) (*dump.Entry, error) {
	x.buf = append(append(append(x.buf[:0], entryPrefix...), raw...), entrySuffix...)
	return x.parse(offset)
}

// Read parses the entry in [offset, end) of ra, streaming: memory follows
// the read window, not the entry. The entry is valid until the next call;
// its Offset and End are those of the file, its Index 0.
func (x *Reader) Read(ra io.ReaderAt, offset, end int64) (*dump.Entry, error) {
	if end <= offset {
		return nil, fmt.Errorf("bad entry range %d-%d", offset, end)
	}
	x.pre.Reset(entryPrefix)
	x.post.Reset(entrySuffix)
	x.sec = *io.NewSectionReader(ra, offset, end-offset)
	x.multi = [3]io.Reader{&x.pre, &x.sec, &x.post}
	return x.parseFrom(io.MultiReader(x.multi[:]...), offset)
}

func (x *Reader) parse(offset int64) (*dump.Entry, error) {
	x.br.Reset(x.buf)
	return x.parseFrom(&x.br, offset)
}

func (x *Reader) parseFrom(src io.Reader, offset int64) (*dump.Entry, error) {
	if x.r == nil {
		x.r = dump.NewReader(src, x.opt)
	} else {
		x.r.Reset(src)
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
