package bytesearch

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
	"slices"
	"sync"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// The window LastEntry reads backwards through, and the overlap that
// keeps a line cut by its start whole; the buffers are reused (a file
// cleared this way costs a few reads, not an allocation).
const lastWin, lastOver = 256 << 10, 4 << 10

type lastEntryBuf struct {
	data  []byte
	lines []int // entry lines of the window that mention a needle
}

var lastEntryBufs = sync.Pool{New: func() any { return &lastEntryBuf{data: make([]byte, lastWin+lastOver)} }}

// backwardNeedles are what every name MayBeBackward accepts holds, the
// closing quote included: a line without one of them is not looked at.
// "meters_grad" rather than "parameters_grad": its first byte is rare in
// a dump, which makes the search several times faster.
var backwardNeedles = [...][]byte{[]byte("backward"), []byte("meters_grad"), []byte("_1\"")}

// LastEntry finds, reading a dump.json written by json.dump(indent=N) from
// its end backwards, the last entry whose name satisfies isBackward, and
// returns the offset of the quote before its name, or -1 when there is
// none. Only names that MayBeBackward accepts are offered to isBackward,
// so only the lines that hold one of their needles are looked at: a window
// without a backward name costs three byte searches. It reads only the
// tail after that entry, a window at a time.
func LastEntry(ra io.ReaderAt, size int64, indent int, isBackward func(name []byte) bool) (int64, error) {
	return lastEntry(ra, size, indent, isBackward, lastWin, lastOver)
}

func lastEntry(ra io.ReaderAt, size int64, indent int, isBackward func(name []byte) bool, win, over int) (int64, error) {
	line := EntryLine(nil, indent, '"')
	lb := lastEntryBufs.Get().(*lastEntryBuf)
	defer lastEntryBufs.Put(lb)
	if len(lb.data) < win+over {
		lb.data = make([]byte, win+over)
	}
	for end := size; end > 0; {
		start := max(0, end-int64(win))
		b := lb.data[:min(size, end+int64(over))-start]
		if _, err := ra.ReadAt(b, start); err != nil && err != io.EOF {
			return -1, err
		}
		// the lines whose '\n' lies in this window and that hold a needle,
		// looked at from the last one back
		limit := int(end - start)
		lb.lines = needleLines(b, limit, lb.lines[:0])
		for i := len(lb.lines) - 1; i >= 0; i-- {
			nl := lb.lines[i]
			if i+1 < len(lb.lines) && lb.lines[i+1] == nl {
				continue
			}
			if name, ok := entryName(b, nl, line); ok && MayBeBackward(name) && isBackward(name) {
				return start + int64(nl+len(line)-1), nil
			}
		}
		end = start
	}
	return -1, nil
}

// EntryLine appends to b the start of a line at the entries' depth of
// a json.dump(indent) document, "\n" and two indentations, then last: '"'
// for an entry's name line, '}' for its closing line.
func EntryLine(b []byte, indent int, last byte) []byte {
	b = append(b, '\n')
	for range 2 * indent {
		b = append(b, ' ')
	}
	return append(b, last)
}

// needleLines appends to lines the starts ('\n') of the lines of b that
// begin before limit and hold a backward needle, in increasing order.
func needleLines(b []byte, limit int, lines []int) []int {
	first := len(lines)
	for _, nd := range backwardNeedles {
		for from := 0; ; {
			i := bytes.Index(b[from:], nd)
			if i < 0 {
				break
			}
			p := from + i
			from = p + len(nd)
			if nl := lastNewline(b[:p]); nl >= 0 && nl < limit {
				lines = append(lines, nl)
			}
		}
	}
	slices.Sort(lines[first:])
	return lines
}

// entryName returns the name of the entry whose line starts at b[nl], when
// that line is an entry line (line is "\n", the indentation and the quote)
// and its name closes on the same line.
func entryName(b []byte, nl int, line []byte) ([]byte, bool) {
	if nl+len(line) > len(b) || !bytes.Equal(b[nl:nl+len(line)], line) {
		return nil, false
	}
	rest := b[nl+len(line):]
	e := bytes.IndexByte(rest, '"')
	if e < 0 || bytes.IndexByte(rest[:e], '\n') >= 0 {
		return nil, false
	}
	return rest[:e], true
}

// lastLine is bytes.LastIndex(b, line) for a line start "\n" + spaces +
// '"': it looks for the quote where a newline lies the line's length
// before it (jsonlex.LastIndexAfterNewline, 32 bytes at a time where the
// CPU can), then compares the line.
func lastLine(b, line []byte) int {
	dist := len(line) - 1
	for hi := len(b); ; {
		i := jsonlex.LastIndexAfterNewline(b, hi, dist, line[dist])
		if i < 0 {
			return -1
		}
		if bytes.Equal(b[i-dist:i+1], line) {
			return i - dist
		}
		hi = i
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
