package dump

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
	"sync"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// The window LastEntry reads backwards through, and the overlap that
// keeps a line cut by its start whole; the buffers are reused (a file
// cleared this way costs a few reads, not an allocation).
const lastWin, lastOver = 256 << 10, 4 << 10

var lastEntryBufs = sync.Pool{New: func() any { b := make([]byte, lastWin+lastOver); return &b }}

// LastEntry finds, reading a dump.json written by json.dump(indent=N) from
// its end backwards, the last entry whose name satisfies match, and returns
// the offset of the quote before its name, or -1 when there is none. It
// reads only the tail after that entry, a window at a time.
func LastEntry(ra io.ReaderAt, size int64, indent int, match func(name []byte) bool) (int64, error) {
	line := append(append([]byte{'\n'}, bytes.Repeat([]byte{' '}, 2*indent)...), '"')
	bp := lastEntryBufs.Get().(*[]byte)
	defer lastEntryBufs.Put(bp)
	buf := *bp
	for end := size; end > 0; {
		start := max(0, end-lastWin)
		b := buf[:min(size, end+lastOver)-start]
		if _, err := ra.ReadAt(b, start); err != nil && err != io.EOF {
			return -1, err
		}
		// lines whose '\n' lies before end, from the last one back
		for limit := int(end - start); ; {
			i := lastLine(b[:min(len(b), limit+len(line)-1)], line)
			if i < 0 {
				break
			}
			q := i + len(line) - 1
			if e := bytes.IndexByte(b[q+1:], '"'); e >= 0 && match(b[q+1:q+1+e]) {
				return start + int64(q), nil
			}
			limit = i
		}
		end = start
	}
	return -1, nil
}

// lastLine is bytes.LastIndex(b, line) for a line start "\n" + spaces +
// '"': it looks back from newline to newline, eight bytes at a time, which
// is several times faster than a search for the whole pattern.
func lastLine(b, line []byte) int {
	for end := len(b); ; {
		i := lastNewline(b[:end])
		if i < 0 {
			return -1
		}
		if i+len(line) <= len(b) && bytes.Equal(b[i:i+len(line)], line) {
			return i
		}
		end = i
	}
}

// lastNewline is bytes.LastIndexByte(b, '\n'), eight bytes at a time.
func lastNewline(b []byte) int {
	const ones, lo7, hi1 = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	end := len(b)
	for ; end >= 8; end -= 8 {
		x := binary.LittleEndian.Uint64(b[end-8:]) ^ ('\n' * ones)
		if m := ^(((x & lo7) + lo7) | x) & hi1; m != 0 {
			return end - 8 + (63-bits.LeadingZeros64(m))>>3
		}
	}
	return bytes.LastIndexByte(b[:end], '\n')
}

// sideLexers are the lexers of stack.json and construct.json, reused: a
// rank's side files are read for a few calls each, and a new 1 MiB window
// for each would cost more than reading them.
var sideLexers = sync.Pool{New: func() any { return jsonlex.New(nil, jsonlex.Options{MaxDepth: 64}) }}

func sideLexer(r io.Reader) *jsonlex.Lexer {
	lx := sideLexers.Get().(*jsonlex.Lexer)
	lx.Reset(r)
	return lx
}
