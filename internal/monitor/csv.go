package monitor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxRecordBytes bounds one CSV record (a line, or several lines joined by
// a quoted field). Longer records are reported and skipped, so that a
// damaged file with a stray quote cannot make the reader hold the rest of
// the file in memory.
const maxRecordBytes = 1 << 20

// syntaxError is a CSV record that cannot be split into fields. The reader
// has already skipped it when it is returned.
type syntaxError struct {
	line int
	msg  string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

var (
	errBareQuote = "bare \" in non-quoted field"
	errQuote     = "extraneous or missing \" in quoted field"
	errLong      = "record longer than 1 MiB"
)

// recordReader splits comma separated text into records the way
// encoding/csv does with FieldsPerRecord -1 and strict quotes: fields may be
// quoted with '"' (a doubled quote inside stands for one), a quoted field
// may span lines, "\r\n" counts as "\n", empty lines are skipped. It does
// not allocate per record: the fields returned by next are valid until the
// following call.
type recordReader struct {
	br      *bufio.Reader
	lineNo  int // physical lines read so far
	recLine int // first line of the last record returned
	noEOL   bool
	fields  [][]byte
	ends    []int
	buf     []byte
	scratch []byte
}

func newRecordReader(r io.Reader, size int) *recordReader {
	return &recordReader{br: bufio.NewReaderSize(r, size)}
}

// readLine returns the next physical line with "\r\n" normalised to "\n"
// and a trailing "\r" at end of input dropped, like encoding/csv. The line
// is valid until the next call. A line longer than maxRecordBytes is
// consumed and reported as a *syntaxError.
func (r *recordReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.scratch = append(r.scratch[:0], line...)
		long := false
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.br.ReadSlice('\n')
			if !long && len(r.scratch)+len(line) <= maxRecordBytes {
				r.scratch = append(r.scratch, line...)
			} else {
				long = true
			}
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if long {
			r.lineNo++
			if err == io.EOF {
				r.noEOL = true
			}
			return nil, &syntaxError{line: r.lineNo, msg: errLong}
		}
		line = r.scratch
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(line) == 0 {
		return nil, io.EOF
	}
	r.lineNo++
	if err == io.EOF {
		r.noEOL = true
		if line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
	}
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line[n-2] = '\n'
		line = line[:n-1]
	}
	return line, nil
}

func lengthNL(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

// next returns the fields of the next record, io.EOF at the end of input,
// a *syntaxError for a record it skipped, or the underlying read error.
func (r *recordReader) next() ([][]byte, error) {
	var line []byte
	var err error
	for {
		line, err = r.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) != lengthNL(line) {
			break
		}
	}
	r.recLine = r.lineNo
	if bytes.IndexByte(line, '"') < 0 {
		// Fast path: no quotes, split on commas in place.
		line = line[:len(line)-lengthNL(line)]
		r.fields = r.fields[:0]
		for {
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				r.fields = append(r.fields, line)
				return r.fields, nil
			}
			r.fields = append(r.fields, line[:i])
			line = line[i+1:]
		}
	}
	return r.quoted(line)
}

// quoted parses a record holding at least one quote, copying its fields.
func (r *recordReader) quoted(line []byte) ([][]byte, error) {
	r.buf = r.buf[:0]
	r.ends = r.ends[:0]
	fail := func(msg string) ([][]byte, error) {
		return nil, &syntaxError{line: r.recLine, msg: msg}
	}
parseField:
	for {
		if len(line) == 0 || line[0] != '"' {
			i := bytes.IndexByte(line, ',')
			field := line
			if i >= 0 {
				field = field[:i]
			} else {
				field = field[:len(field)-lengthNL(field)]
			}
			if bytes.IndexByte(field, '"') >= 0 {
				return fail(errBareQuote)
			}
			r.buf = append(r.buf, field...)
			r.ends = append(r.ends, len(r.buf))
			if i >= 0 {
				line = line[i+1:]
				continue parseField
			}
			break parseField
		}
		line = line[1:]
		for {
			i := bytes.IndexByte(line, '"')
			switch {
			case i >= 0:
				r.buf = append(r.buf, line[:i]...)
				line = line[i+1:]
				switch {
				case len(line) > 0 && line[0] == '"':
					r.buf = append(r.buf, '"')
					line = line[1:]
				case len(line) > 0 && line[0] == ',':
					line = line[1:]
					r.ends = append(r.ends, len(r.buf))
					continue parseField
				case lengthNL(line) == len(line):
					r.ends = append(r.ends, len(r.buf))
					break parseField
				default:
					return fail(errQuote)
				}
			case len(line) > 0:
				r.buf = append(r.buf, line...)
				if len(r.buf) > maxRecordBytes {
					return fail(errLong)
				}
				var err error
				line, err = r.readLine()
				if err != nil {
					var se *syntaxError
					if errors.As(err, &se) {
						return fail(errLong)
					}
					if err == io.EOF {
						return fail(errQuote)
					}
					return nil, err
				}
			default:
				return fail(errQuote)
			}
		}
	}
	r.fields = r.fields[:0]
	start := 0
	for _, e := range r.ends {
		r.fields = append(r.fields, r.buf[start:e:e])
		start = e
	}
	return r.fields, nil
}
