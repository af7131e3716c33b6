package trainlog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nanhunt/nanhunt/internal/safeio"
)

const (
	// bufSize is the read buffer of a file, also the most that is looked at
	// to tell JSON from text.
	bufSize = 256 << 10
	// maxTextLine is how much of a text line is kept; the rest is skipped.
	maxTextLine = 64 << 10
	// maxJSONLine is how much of a JSON Lines line is kept.
	maxJSONLine = 4 << 20
)

// input is an open file, decompressed when it is gzip.
type input struct {
	f  *os.File
	gz *gzip.Reader
	br *bufio.Reader
}

// openInput opens path for reading, until ctx is done; a file starting
// with the gzip magic bytes is decompressed whatever its name.
func openInput(ctx context.Context, path string) (*input, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory", path)
	}
	raw := bufio.NewReaderSize(safeio.CancelReader(ctx, f), 64<<10)
	in := &input{f: f}
	if magic, _ := raw.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(raw)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: bad gzip header: %w", path, err)
		}
		gz.Multistream(true)
		in.gz = gz
		in.br = bufio.NewReaderSize(gz, bufSize)
	} else {
		in.br = bufio.NewReaderSize(raw, bufSize)
	}
	return in, nil
}

func (in *input) Close() error {
	if in.gz != nil {
		in.gz.Close()
	}
	return in.f.Close()
}

// lineReader returns the lines of a stream one at a time, without their
// line ending, keeping at most max bytes of each.
type lineReader struct {
	br   *bufio.Reader
	max  int
	buf  []byte
	line int // number of the last line returned, from 1
	err  error
}

// next returns the next line and whether it was cut. The bytes are valid
// until the next call. At the end of the stream it returns ok false; err
// then holds a read error other than io.EOF, if any.
func (lr *lineReader) next() (line []byte, cut, ok bool) {
	if lr.err != nil {
		return nil, false, false
	}
	frag, err := lr.br.ReadSlice('\n')
	if err == nil || (err == io.EOF && len(frag) > 0) {
		lr.line++
		if err == io.EOF {
			lr.err = io.EOF
		}
		frag = trimEOL(frag)
		if len(frag) > lr.max {
			return frag[:lr.max], true, true
		}
		return frag, false, true
	}
	if err != bufio.ErrBufferFull {
		lr.err = err
		return nil, false, false
	}
	// A long line: keep the first max bytes, skip the rest.
	lr.buf = append(lr.buf[:0], frag...)
	for {
		frag, err = lr.br.ReadSlice('\n')
		if room := lr.max - len(lr.buf); room > 0 {
			lr.buf = append(lr.buf, frag[:min(room, len(frag))]...)
		}
		if err != bufio.ErrBufferFull {
			break
		}
	}
	if err != nil {
		lr.err = err
	}
	lr.line++
	b := trimEOL(lr.buf)
	if len(b) > lr.max {
		b = b[:lr.max]
	}
	cut = len(b) == lr.max
	if cap(lr.buf) > 2*lr.max+bufSize {
		lr.buf = nil
	}
	return b, cut, true
}

// readErr returns the error that ended the stream, nil at a clean end.
func (lr *lineReader) readErr() error {
	if lr.err == nil || errors.Is(lr.err, io.EOF) {
		return nil
	}
	return lr.err
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
