package bytesearch

import (
	"bytes"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// topLevel follows the members of the document in the window b (its first
// carry bytes seen before), for Hits.Whole: in a json.dump(indent=N)
// document a member of the top-level object starts a line "\n", N spaces,
// '"', and no other line does (json.dump escapes the newlines of strings,
// and everything inside "data" is indented further). msprobe writes "data"
// last: a member line after the first "data" line is a member after data,
// a second "data" member among them, and the file is left to the Reader,
// which says where it breaks. Only the top-level lines are compared, found
// 32 bytes at a time (jsonlex.IndexAfterNewline); an msprobe file has
// none after its "data" line. It reports whether the document may still
// be whole.
func (p *Prefilter) topLevel(b []byte, carry int, final bool) bool {
	dist := len(p.topLine) - 1
	if dist < 1 {
		return true
	}
	lo, hi := max(dist, carry-contextLen), len(b)-contextLen
	if carry == 0 {
		lo = dist
	}
	if final {
		hi = len(b)
	}
	for k := lo; k < hi; {
		i := jsonlex.IndexAfterNewline(b[:hi], k, dist, '"')
		if i < 0 {
			return true
		}
		k = i + 1
		if !bytes.Equal(b[i-dist:i+1], p.topLine) {
			continue
		}
		if p.dataLine {
			return false // a member after "data"
		}
		p.dataLine = bytes.HasPrefix(b[i:], []byte(`"data":`))
	}
	return true
}

// endsWithData reports whether a json.dump(indent) document ends with the
// line that closes its last member, an object ("data"), then the line of
// the document's closing brace: what a second member written after "data"
// on one line ("data": {}) does not end with.
func endsWithData(end []byte, indent int) bool {
	t := bytes.TrimRight(end, " \t\r\n")
	if !bytes.HasSuffix(t, []byte("\n}")) {
		return false
	}
	t = bytes.TrimRight(t[:len(t)-2], " \t\r")
	close := len(t) - indent - 2 // the newline before the closing line of "data"
	if close < 0 || t[len(t)-1] != '}' || t[close] != '\n' {
		return false
	}
	return len(bytes.TrimLeft(t[close+1:len(t)-1], " ")) == 0
}
