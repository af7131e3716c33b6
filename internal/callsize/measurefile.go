package callsize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/bytesearch"
	"github.com/nanhunt/nanhunt/internal/entryat"
)

// MeasureFile is Measure of a dump.json of the given size read at
// random (an *os.File), with the same result, without reading every entry:
// in a document json.dump(indent=N) wrote whole, whose "data" is its last
// member and whose bytes hold no backslash, an entry's line is a newline,
// 2N spaces and its quoted name, and the name of a call of an op starts
// with the op (Name.Op). So the op names are searched for as bytes (a
// search that runs at memory speed), and only the entries whose line holds
// one are parsed. A document whose ends, first entry, or the bytes after a
// parsed entry are not of that form is read by Measure. The lines
// between are not looked at: as with ReaderOptions.Select, damage inside
// the entries of other ops goes unseen, and so would an entry indented
// otherwise than the first (json.dump never writes one).
func MeasureFile(ra io.ReaderAt, size int64, ops []string) (map[string]Sizes, error) {
	return measureFile(ra, size, ops, measureWindow)
}

// measureFile is MeasureFile through windows of the given size (tests
// make them small, so that entries cross their edges).
func measureFile(ra io.ReaderAt, size int64, ops []string, window int) (map[string]Sizes, error) {
	m := measureSearch{ra: ra, size: size, ops: ops, window: window}
	out, ok, err := m.run()
	if ok || err != nil {
		return out, err
	}
	return Measure(io.NewSectionReader(ra, 0, size), ops)
}

// measureSearch is MeasureFile's search of one document.
type measureSearch struct {
	ra     io.ReaderAt
	size   int64
	ops    []string
	window int // how much of the document one read brings
	indent int
	buf    []byte

	// the lines of json.dump(indent=N) output the search looks for, set
	// with indent
	line   []byte // an entry's: "\n", 2N spaces, '"'
	member []byte // a member of the document after an object: "},\n", N spaces, '"'
	close  []byte // the one that closes "data": "\n", N spaces, '}'
	back   int    // how far a window reads past its end: the longest pattern
	// anchor is, for each op, the place of its byte that is rarest in the
	// document's first bytes: the search looks for that byte first
	anchor []int
}

// measureWindow is how much of the document one read brings.
const measureWindow = 256 << 10

// errNotThatShape says a document is not of the shape the search needs.
var errNotThatShape = errors.New("not a whole indented document")

// run searches the document; ok is false, with no error, when it is not
// of the shape the search needs.
func (m *measureSearch) run() (out map[string]Sizes, ok bool, err error) {
	data, err := m.shape()
	if errors.Is(err, errNotThatShape) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	starts, parsed, err := m.entryStarts(data)
	if errors.Is(err, errNotThatShape) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out = map[string]Sizes{}
	at := entryat.New(dump.ReaderOptions{Details: true, WindowSize: 8 << 10}) // an entry or two a read
	ra := newWindowedReaderAt(m.ra, m.size, m.window)
	m.ra = ra // entryEnds reads the bytes after an entry: in the window, mostly
	end := int64(-1)
	for _, off := range starts {
		if off < end {
			continue // inside the entry parsed before (never, in a valid document)
		}
		c, ok := parsed[off]
		if !ok {
			e, err := at.Read(ra, off, m.size)
			if err != nil {
				return nil, false, nil // let the reader say what is wrong
			}
			if !m.entryEnds(e.End) {
				return nil, false, nil
			}
			c = measuredCall{end: e.End, op: dump.ParseName(e.Name).Op()}
			if slices.Contains(m.ops, c.op) {
				c.sizes = addCall(Sizes{}, e)
			}
		}
		end = c.end
		if slices.Contains(m.ops, c.op) {
			out[c.op] = addSizes(out[c.op], c.sizes)
		}
	}
	return out, true, nil
}

// measuredCall is an entry the search found, parsed: where it ends, its
// op, and its sizes when the op is one measured.
type measuredCall struct {
	end   int64
	op    string
	sizes Sizes
}

// addSizes is a + b.
func addSizes(a, b Sizes) Sizes {
	return Sizes{Calls: a.Calls + b.Calls, Tensors: a.Tensors + b.Tensors, Bytes: a.Bytes + b.Bytes}
}

// shape checks the document's ends: json.dump(indent=N) output whose
// last member is "data", an object, closed on its own line before the
// document's closing line. It returns the offset just past the line that
// opens "data".
func (m *measureSearch) shape() (int64, error) {
	head, err := m.read(0, min(m.size, 64<<10))
	if err != nil {
		return 0, err
	}
	if m.indent = bytesearch.DocumentIndent(head); m.indent == 0 {
		return 0, errNotThatShape
	}
	m.line = bytesearch.EntryLine(nil, m.indent, '"')
	m.member = []byte("},\n" + strings.Repeat(" ", m.indent) + `"`)
	m.close = []byte("\n" + strings.Repeat(" ", m.indent) + "}")
	m.back = len(m.member)
	for _, op := range m.ops {
		m.back = max(m.back, len(op))
	}
	m.anchor = rarestBytes(head, m.ops)
	open := "\n" + strings.Repeat(" ", m.indent) + `"data": {` + "\n"
	i := bytes.Index(head, []byte(open))
	if i < 0 {
		return 0, errNotThatShape
	}
	data := int64(i + len(open) - 1) // the newline that starts the first entry's line
	if first := bytesearch.EntryLine(nil, m.indent, '"'); !bytes.HasPrefix(head[data:], first) {
		return 0, errNotThatShape // the first entry is not indented twice
	}
	tail, err := m.read(max(data, m.size-64), m.size)
	if err != nil {
		return 0, err
	}
	if !bytes.HasSuffix(bytes.TrimRight(tail, " \t\r\n"), append(m.close[:len(m.close):len(m.close)], "\n}"...)) { // "data", then the document
		return 0, errNotThatShape
	}
	return data, nil
}

// entryStarts returns the offsets, ascending, of the names on entry lines
// after data that start with one of the ops. A backslash anywhere after
// data (an escape could spell a name differently) or a member of the
// document after an object (a member after "data") means the document is
// not of the shape the search needs. The windows are searched on every
// core: nothing else runs while a plan is sized.
//
// The entries found that lie whole in their window, followed there by the
// next entry's line, are parsed from it (parsed, by offset): only the
// others are read again.
func (m *measureSearch) entryStarts(data int64) ([]int64, map[int64]measuredCall, error) {
	windows := int((m.size - data + int64(m.window) - 1) / int64(m.window))
	workers := min(runtime.GOMAXPROCS(0), windows)
	found := make([]windowSearch, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ws := &found[w]
			ws.parsed = map[int64]measuredCall{}
			ws.at = entryat.New(dump.ReaderOptions{Details: true, WindowSize: 8 << 10})
			for i := w; i < windows && errs[w] == nil; i += workers {
				errs[w] = m.searchWindow(ws, data+int64(i)*int64(m.window))
			}
		})
	}
	wg.Wait()
	for w := range workers {
		if errs[w] != nil && !errors.Is(errs[w], errNotThatShape) {
			return nil, nil, errs[w]
		}
	}
	var starts []int64
	parsed := map[int64]measuredCall{}
	for w := range workers {
		if errs[w] != nil {
			return nil, nil, errs[w]
		}
		starts = append(starts, found[w].starts...)
		maps.Copy(parsed, found[w].parsed)
	}
	slices.Sort(starts)
	return slices.Compact(starts), parsed, nil
}

// maxParsedInWindow bounds the entries one worker of entryStarts keeps
// parsed (about 100 bytes each).
const maxParsedInWindow = 1 << 16

// windowSearch is what one worker of entryStarts keeps: the entry names
// found, those of the entries parsed from their window, its window and
// its parser.
type windowSearch struct {
	starts []int64
	parsed map[int64]measuredCall
	buf    []byte
	at     *entryat.Reader
}

// searchWindow appends to ws.starts the entry names of the window at pos
// that start with one of the ops (see entryStarts), reading it into
// ws.buf, and parses those it holds whole.
func (m *measureSearch) searchWindow(ws *windowSearch, pos int64) error {
	line, member := m.line, m.member
	from := max(0, pos-int64(len(line)))
	b, err := readAt(m.ra, &ws.buf, from, min(m.size, pos+int64(m.window)+int64(m.back)))
	if err != nil {
		return err
	}
	lo := int(pos - from)          // b[lo] is at pos
	hi := min(len(b), lo+m.window) // matches starting in b[lo:hi] are this window's
	if bytes.IndexByte(b[lo:hi], '\\') >= 0 || bytes.Contains(b[lo:min(len(b), hi+len(member)-1)], member) {
		return errNotThatShape
	}
	first := len(ws.starts)
	for n, op := range m.ops {
		if op == "" {
			continue
		}
		for k := lo; k < hi; {
			i := indexByAnchor(b[k:min(len(b), hi+len(op)-1)], op, m.anchor[n])
			if i < 0 {
				break
			}
			k += i
			if k >= len(line) && bytes.Equal(b[k-len(line):k], line) {
				ws.starts = append(ws.starts, from+int64(k-1)) // the name's quote
			}
			k++
		}
	}
	for _, off := range ws.starts[first:] {
		m.parseInWindow(ws, b, from, off)
	}
	return nil
}

// parseInWindow parses the entry at off from the window b (at from) when
// it lies whole in it, followed by the next entry's line: what
// entryEnds asks of an entry. Any other entry is left to be read again.
func (m *measureSearch) parseInWindow(ws *windowSearch, b []byte, from, off int64) {
	q := int(off - from)
	next := bytes.Index(b[q:], m.line) // the next entry's line, after a comma
	if next < 1 || b[q+next-1] != ',' {
		return
	}
	if len(ws.parsed) >= maxParsedInWindow {
		return // memory is bounded: the rest are read again
	}
	raw := b[q : q+next-1]
	e, err := ws.at.Parse(raw, off)
	if err != nil || e.End != off+int64(len(raw)) {
		return
	}
	c := measuredCall{end: e.End, op: dump.ParseName(e.Name).Op()}
	if slices.Contains(m.ops, c.op) {
		c.sizes = addCall(Sizes{}, e)
	}
	ws.parsed[off] = c
}

// entryEnds reports whether what follows an entry's value at end is
// what follows it in json.dump(indent=N) output: the next entry's line,
// or the line that closes "data".
func (m *measureSearch) entryEnds(end int64) bool {
	b, err := m.read(end, min(m.size, end+1+int64(len(m.line))))
	return err == nil && ((len(b) > 0 && b[0] == ',' && bytes.HasPrefix(b[1:], m.line)) || bytes.HasPrefix(b, m.close))
}

// read returns the bytes [from, to) of the document, in m.buf.
func (m *measureSearch) read(from, to int64) ([]byte, error) {
	return readAt(m.ra, &m.buf, from, to)
}

// readAt returns the bytes [from, to) of ra, in *buf.
func readAt(ra io.ReaderAt, buf *[]byte, from, to int64) ([]byte, error) {
	n := int(to - from)
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	got, err := ra.ReadAt(b, from)
	if got == n {
		return b, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("offset %d: %w", from+int64(got), err)
}

// rarestBytes is, for each op, the place of its byte that the sample holds
// least often (the first such place).
func rarestBytes(sample []byte, ops []string) []int {
	var count [256]int
	for _, c := range sample {
		count[c]++
	}
	out := make([]int, len(ops))
	for n, op := range ops {
		for j := 1; j < len(op); j++ {
			if count[op[j]] < count[op[out[n]]] {
				out[n] = j
			}
		}
	}
	return out
}

// indexByAnchor is bytes.Index(b, op), looking for op's byte at place
// anchor first: the first occurrence, -1 if none.
func indexByAnchor(b []byte, op string, anchor int) int {
	c := op[anchor]
	for k := anchor; k < len(b); k++ {
		i := bytes.IndexByte(b[k:], c)
		if i < 0 {
			return -1
		}
		k += i
		if start := k - anchor; start+len(op) <= len(b) && string(b[start:start+len(op)]) == op {
			return start
		}
	}
	return -1
}
