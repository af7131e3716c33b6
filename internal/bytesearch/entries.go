package bytesearch

import (
	"bytes"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// forwardAPIOp returns the op of a forward API call's entry name
// ("Torch.log" of "Torch.log.0.forward"), the way ParseName reads it,
// without allocating; ok is false for anything else (backward calls,
// modules, collectives).
func forwardAPIOp(name []byte) (op []byte, ok bool) {
	rest, found := bytes.CutSuffix(name, []byte(".forward"))
	if !found {
		return nil, false
	}
	i := bytes.LastIndexByte(rest, '.')
	if i <= 0 || i == len(rest)-1 {
		return nil, false
	}
	for _, c := range rest[i+1:] {
		if !isDigit(c) {
			return nil, false
		}
	}
	op = rest[:i]
	if bytes.HasPrefix(op, []byte("Distributed.")) || bytes.HasPrefix(op, []byte("MintDistributed.")) ||
		bytes.LastIndexByte(op, '.') <= 0 {
		return nil, false
	}
	return op, true
}

// entryMark is the start of an entry and what kind of call it is.
type entryMark struct {
	offset  int64  // of the quote before its name; -1 for none
	forward bool   // a forward API call
	op      string // its op, for a forward API call
}

// detectIndent reads the indentation of json.dump(indent=N) from the
// document's first member line, to know how an entry's line starts.
func (p *Prefilter) detectIndent(b []byte) {
	if n := DocumentIndent(b); n > 0 {
		p.hits.Indent = n
		p.entryLine = EntryLine(p.entryLine[:0], n, '"')
		p.topLine = append(append(p.topLine[:0], '\n'), p.entryLine[1+n:]...) // one indentation
	}
}

// DocumentIndent is the indentation of json.dump(indent=N) output read
// from the first member line of the document b starts: "{", a newline,
// N spaces (at most 16) and a quote. 0 when b does not start so.
func DocumentIndent(b []byte) int {
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) < 3 || t[0] != '{' || t[1] != '\n' {
		return 0
	}
	n := 0
	for n+2 < len(t) && t[2+n] == ' ' {
		n++
	}
	if n == 0 || n > 16 || 2+n >= len(t) || t[2+n] != '"' {
		return 0
	}
	return n
}

// entryBefore finds the entry whose line starts last before b[k]: in the
// window, or remembered from an earlier one. Hits come in ascending order
// within a window, so only the bytes since the last hit located are
// searched: no entry line between them means the same entry.
func (p *Prefilter) entryBefore(b []byte, k int, off int64) entryMark {
	from := 0
	if p.located.offset >= off && p.located.offset < off+int64(k) {
		from = int(p.located.offset - off)
	}
	if p.locatedAt > from && p.locatedAt <= k {
		from = p.locatedAt
	}
	i := lastLine(b[from:k], p.entryLine)
	switch {
	case i >= 0:
		p.located = p.entryMarkAt(b, from+i, off)
	case from == 0:
		p.located = p.prevEntry
	}
	p.locatedAt = k
	return p.located
}

// markLastEntry remembers the last entry line before b[end] for hits in
// later windows.
func (p *Prefilter) markLastEntry(b []byte, end int, final bool) {
	if len(p.entryLine) == 0 || final {
		return
	}
	end = max(0, min(end, len(b)))
	if i := bytes.LastIndex(b[:end], p.entryLine); i >= 0 {
		p.prevEntry = p.entryMarkAt(b, i, p.base-int64(p.carry))
	}
}

// entryMarkAt reads the entry whose line starts at b[i] (its '\n').
func (p *Prefilter) entryMarkAt(b []byte, i int, off int64) entryMark {
	q := i + len(p.entryLine) - 1 // the opening quote
	end := bytes.IndexByte(b[q+1:], '"')
	if end < 0 || bytes.IndexByte(b[q+1:q+1+end], '\\') >= 0 {
		return entryMark{offset: off + int64(q)} // a name cut by the window, or with escapes: not known
	}
	m := entryMark{offset: off + int64(q)}
	if op, ok := forwardAPIOp(b[q+1 : q+1+end]); ok {
		m.forward = true
		if m.op, ok = p.opNames[string(op)]; !ok {
			m.op = jsonlex.Text(op)
			if p.opNames == nil {
				p.opNames = map[string]string{}
			}
			if len(p.opNames) < 1024 {
				p.opNames[string(op)] = m.op
			}
		}
	}
	return m
}
