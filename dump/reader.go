package dump

import (
	"errors"
	"fmt"
	"io"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// ReaderOptions tunes a Reader.
type ReaderOptions struct {
	// Details asks for everything a report shows: slots, types, dtypes,
	// shapes, data_name and the values of all statistics. Without it the
	// reader keeps only what decides NaN/Inf questions, which is faster.
	Details bool
	// WindowSize is the read window in bytes (0: 1 MiB).
	WindowSize int
	// Select, when set, is asked before each entry's value is read; when
	// it says no, the value is skipped without being parsed (only strings
	// and brackets are followed, so a syntax error inside it goes unseen),
	// and the Entry has only its name, index and byte range (Skipped is set).
	Select func(name string, offset int64) bool
	// Indent, when set, says the document is json.dump(indent=Indent)
	// output (as a byte search can tell from its first lines): an entry
	// Select skips is then passed over to its closing line ("\n", two
	// indentations, "}") without its bytes being looked at, which is
	// several times faster than following its strings and brackets.
	Indent int
}

// maxDepth bounds nesting: msprobe writes at most about ten levels, and a
// hostile file must not make memory grow.
const maxDepth = 512

// maxString bounds what the reader keeps of one string: msprobe's strings
// are names, types and short values; a longer string value is cut
// (Entry.CutStrings), a longer name is damage.
const maxString = 1 << 20

// FormatError is damage in dump.json: a syntax error or a file that ends
// early. Entries before it were returned; nothing after it was read.
type FormatError struct {
	Offset int64  // byte offset of the damage
	Entry  string // the entry being read when it was found; "" outside "data"
	Err    error
}

func (e *FormatError) Error() string {
	where := fmt.Sprintf("offset %d", e.Offset)
	if e.Entry != "" {
		where += fmt.Sprintf(" in entry %q", e.Entry)
	}
	msg := e.Err.Error()
	var se *jsonlex.SyntaxError
	if errors.As(e.Err, &se) {
		msg = se.Msg
	}
	if e.Truncated() {
		return where + ": file ends early (" + msg + "); a crash during msprobe's write leaves this"
	}
	return where + ": " + msg
}

func (e *FormatError) Unwrap() error { return e.Err }

// Truncated reports whether the file simply stops, rather than holding
// something that is not JSON.
func (e *FormatError) Truncated() bool { return errors.Is(e.Err, io.ErrUnexpectedEOF) }

// Reader streams the entries of one dump.json in file order. Like
// bufio.Scanner, it owns the Entry it returns until the next call to Next.
type Reader struct {
	lx    *jsonlex.Lexer
	opt   ReaderOptions
	hdr   Header
	e     Entry
	state int // 0 before "data", 1 inside it, 2 done
	index int
	err   error

	paramGrads    bool     // the current entry is a parameters_grad entry
	path          []string // slot path below the field (details only)
	shape         []int
	groupRanks    []int
	merged        map[mergeKey]int // summaries of values past maxKept
	closeLine     []byte           // the line that closes an entry, when ReaderOptions.Indent is set
	direct        int              // objects read straight from the window
	directEntries int              // entries read so
	tensorClose   closeLine        // how the last tensor read directly closed
	shapeClose    closeLine        // how the last shape read directly closed
}

// NewReader starts reading a dump.json from r.
func NewReader(r io.Reader, opt ReaderOptions) *Reader {
	rd := &Reader{
		lx: jsonlex.New(r, jsonlex.Options{WindowSize: opt.WindowSize, MaxDepth: maxDepth, MaxStringLen: maxString, CutLongStrings: true}),
	}
	rd.setOptions(opt)
	return rd
}

func (r *Reader) setOptions(opt ReaderOptions) {
	r.opt = opt
	r.closeLine = r.closeLine[:0]
	if opt.Indent > 0 && opt.Indent <= 64 {
		r.closeLine = closingLine(r.closeLine, opt.Indent)
	}
}

// Reuse makes the Reader read a new dump.json from src with new options,
// keeping its buffers (the window keeps the size it was made with).
func (r *Reader) Reuse(src io.Reader, opt ReaderOptions) {
	r.setOptions(opt)
	r.paramGrads, r.path = false, r.path[:0]
	clear(r.merged)
	r.Reset(src)
}

// Reset makes the Reader read a new dump.json from r, keeping its buffers
// and options.
func (r *Reader) Reset(src io.Reader) {
	r.lx.Reset(src)
	r.hdr = Header{}
	r.state, r.index, r.err = 0, 0, nil
}

// Header returns the fields read so far outside "data" (msprobe writes them
// before it, so they are known after the first call to Next).
func (r *Reader) Header() Header { return r.hdr }

// Entry returns the entry read by the last successful Next.
func (r *Reader) Entry() *Entry { return &r.e }

// Err returns the first error met, or nil at a clean end of file. Damage is
// a *FormatError.
func (r *Reader) Err() error { return r.err }

// Raw returns the bytes of the entry just read (from its name to the end of
// its value) when the read window still holds them, else nil. They are
// valid until the next call to Next.
func (r *Reader) Raw() []byte { return r.lx.Buffered(r.e.Offset) }

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int64 { return r.lx.InputOffset() }

// Next reads the next entry. It returns false at the end of the file or at
// the first error.
func (r *Reader) Next() bool {
	if r.err != nil || r.state == 2 {
		return false
	}
	if r.state == 0 {
		if err := r.readUntilData(); err != nil {
			r.fail(err, "")
			return false
		}
		if r.state == 2 {
			return false
		}
	}
	tok, err := r.lx.Next()
	if err != nil {
		r.fail(err, "")
		return false
	}
	if tok.Kind == jsonlex.ObjectEnd {
		if err := r.readTail(); err != nil {
			r.fail(err, "")
		}
		r.state = 2
		return false
	}
	// tok is an entry name.
	e := &r.e
	e.reset()
	clear(r.merged)
	e.Name = jsonlex.Text(tok.Bytes)
	e.Offset = tok.Offset
	e.Index = r.index
	r.index++
	if r.opt.Select != nil && !r.opt.Select(e.Name, e.Offset) {
		e.Skipped = true
		var err error
		if len(r.closeLine) > 0 {
			err = r.lx.SkipObjectLines(r.closeLine)
		} else {
			err = r.lx.SkipValueFast()
		}
		if err != nil {
			r.fail(err, e.Name)
			return false
		}
		e.End = r.lx.InputOffset()
		return true
	}
	cuts := r.lx.Cuts()
	if r.entryFast() {
		e.End = r.lx.InputOffset()
		return true
	}
	if err := r.readEntry(); err != nil {
		r.fail(err, e.Name)
		return false
	}
	e.End = r.lx.InputOffset()
	e.CutStrings = r.lx.Cuts() - cuts
	return true
}

// structErr is valid JSON in a shape dump.json never has.
type structErr struct {
	offset int64
	msg    string
}

func (e *structErr) Error() string { return e.msg }

func (r *Reader) fail(err error, entry string) {
	var se *jsonlex.SyntaxError
	var st *structErr
	off := r.lx.InputOffset()
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &st):
		off = st.offset
	}
	r.err = &FormatError{Offset: off, Entry: entry, Err: err}
}

// readUntilData reads the header members up to "data" and its opening brace.
func (r *Reader) readUntilData() error {
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	if tok.Kind != jsonlex.ObjectStart {
		return &structErr{tok.Offset, fmt.Sprintf("dump.json starts with %v, want an object", tok.Kind)}
	}
	nullData := false // "data": null was read
	for {
		tok, err := r.lx.Next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonlex.ObjectEnd {
			r.state = 2
			return r.expectEOF()
		}
		if string(tok.Bytes) == "data" {
			if nullData {
				return &structErr{tok.Offset, "a second \"data\" member, after \"data\": null"}
			}
			tok, err := r.lx.Next()
			if err != nil {
				return err
			}
			switch tok.Kind {
			case jsonlex.ObjectStart:
				r.state = 1
				return nil
			case jsonlex.Null:
				nullData = true
				continue // "data": null, as an empty dump
			}
			return &structErr{tok.Offset, fmt.Sprintf("\"data\" is %v, want an object", tok.Kind)}
		}
		if err := r.headerValue(string(tok.Bytes)); err != nil {
			return err
		}
	}
}

// readTail reads header members after "data" and the end of the file.
func (r *Reader) readTail() error {
	for {
		tok, err := r.lx.Next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonlex.ObjectEnd {
			return r.expectEOF()
		}
		if string(tok.Bytes) == "data" {
			// Python's json keeps the last of duplicated keys; which one
			// msprobe meant cannot be told
			return &structErr{tok.Offset, "a second \"data\" member: the entries of the first were read"}
		}
		if err := r.headerValue(string(tok.Bytes)); err != nil {
			return err
		}
	}
}

func (r *Reader) expectEOF() error {
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	if tok.Kind != jsonlex.EOF {
		return &structErr{tok.Offset, fmt.Sprintf("unexpected %v after the top-level object", tok.Kind)}
	}
	return nil
}

func (r *Reader) headerValue(key string) error {
	var dst *string
	switch key {
	case "task":
		dst = &r.hdr.Task
	case "level":
		dst = &r.hdr.Level
	case "framework":
		dst = &r.hdr.Framework
	case "dump_data_dir":
		dst = &r.hdr.DumpDataDir
	default:
		return r.lx.SkipValue()
	}
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonlex.String:
		*dst = string(tok.Bytes)
	case jsonlex.ObjectStart, jsonlex.ArrayStart:
		return r.skipRest()
	}
	return nil
}

// skipRest skips the rest of a container whose opening token was consumed.
func (r *Reader) skipRest() error {
	depth := r.lx.Depth()
	for r.lx.Depth() >= depth {
		if _, err := r.lx.Next(); err != nil {
			return err
		}
	}
	return nil
}

// closingLine appends to b the line that closes an entry of a
// json.dump(indent) document: "\n", two indentations, '}'.
func closingLine(b []byte, indent int) []byte {
	b = append(b, '\n')
	for range 2 * indent {
		b = append(b, ' ')
	}
	return append(b, '}')
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
