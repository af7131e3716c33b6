package dump

import (
	"bytes"
	"cmp"
	"io"
	"math/bits"
	"slices"
)

// Hits is where a dump.json may hold a non-finite value, found by a byte
// search without parsing. A file without hits holds none: every statistic
// the Reader would return is finite (or null, or not a number). The
// converse does not hold: a hit only says "parse here".
type Hits struct {
	// Spans hold the suspect tokens: ascending and disjoint, each from the
	// offset of its first suspect to that of its last. There are at most as
	// many as the Prefilter keeps: past that, the spans closest to each
	// other are merged (a span may then hold clean bytes between its
	// suspects, never a suspect outside every span), so a file with a
	// hundred thousand attention masks is still searched to its end.
	Spans []Span
	// Whole: the bytes start with '{', hold no NUL byte (never valid JSON
	// text; the search stops at the first window holding one, or at a
	// first byte other than '{'), are laid out by json.dump(indent=N) with
	// one top-level "data" member, the last (see topLevel), and end the way
	// json.dump ends such a document: the line closing "data" at one
	// indentation, then a line holding only the closing '}'. A dump.json
	// cut by a crash during msprobe's write is not whole, and must be parsed
	// to say where it ends; so is a document written on one line, and one
	// with a second "data" member (damage) or another member after "data".
	// (A cleared file is not parsed, so other damage to it goes unseen.)
	Whole bool
	// Located: the document is indented (json.dump(indent=N)), and the
	// hits were placed in their entries while they could all be -inf in
	// forward API calls (not modules, not collectives): up to the first
	// that may be NaN or +Inf (FirstSevere), or the first outside such a
	// call (then Forward is false), which is placed too. Then Forward says
	// whether every hit placed lies in a forward API call, and LastEntry is
	// the offset of the last entry holding a placed hit. Past that no hit
	// is placed: nothing can be cleared as masks only any more
	// (policy.MasksOnly), and a file full of NaN is searched without
	// looking for the entry of each.
	Located   bool
	Forward   bool
	LastEntry int64
	// Indent is the document's indentation, when Located.
	Indent int
	// ForwardOps counts the placed hits in forward API calls by op
	// ("Torch.log"), for at most 64 ops, and OtherForwardOps those of the
	// other ops; when Located.
	ForwardOps      map[string]int
	OtherForwardOps int
	// FirstSevere is the offset of the first hit that may be NaN or +Inf
	// (not only -inf, which attention masks write on purpose); -1 if none.
	FirstSevere int64
	// Tensors and Stats count the "dtype" and "Max" keys: a file whose
	// tensors carry no statistics (summary_mode xor) says nothing about
	// NaN, and must be parsed to say so.
	Tensors, Stats int
	// NoBackward: every byte was searched and none of the byte sequences
	// every backward name holds (see MayBeBackward) occurs, so the file
	// has no backward entry and LastEntry would return -1 after reading it
	// whole. False says nothing: the search stops at the first such
	// sequence, and once a hit that is no -inf in a forward call is seen.
	NoBackward bool
	// Partial: ScanUntilSevere stopped after the window holding the first
	// hit that may be NaN or +Inf; the spans are those of the bytes before
	// Searched, and Whole and NoBackward say nothing (both false).
	Partial  bool
	Searched int64
}

// Span is a part of a document, from From to To (both included).
type Span struct{ From, To int64 }

// Clear reports whether the file holds no non-finite value, looks whole and
// has statistics: it need not be parsed.
func (h *Hits) Clear() bool {
	return len(h.Spans) == 0 && h.Whole && (h.Tensors == 0 || h.Stats > 0)
}

// Within reports whether [from, to) may hold a hit: whether it meets a
// span.
func (h *Hits) Within(from, to int64) bool {
	i := h.SpanAfter(from)
	return i < len(h.Spans) && h.Spans[i].From < to
}

// SpanAfter is the index of the first span that ends at or after off, or
// len(h.Spans).
func (h *Hits) SpanAfter(off int64) int {
	i, _ := slices.BinarySearchFunc(h.Spans, off, func(s Span, off int64) int { return cmp.Compare(s.To, off) })
	return i
}

// SearchRules are the parameters of the byte search that come from the
// rule set (package policy): dump only finds, the rules decide.
type SearchRules struct {
	// IgnoredStats are the statistics of a tensor whose values are never
	// suspects ("Mean", "Norm"): a non-finite value there decides nothing.
	IgnoredStats []string
}

// Prefilter searches dump.json bytes, several bytes at a time, for anything
// the Reader could read as a non-finite value:
//
//   - the bare tokens NaN and Infinity (and so -Infinity), anywhere but as
//     the value of one of SearchRules.IgnoredStats of a tensor (see
//     ignoredStatOfTensor);
//   - strings that spell nan, inf or infinity in any case with an optional
//     sign, strings with \u escapes (which could spell them), and the
//     "is_nan" flag of nan_check dumps;
//   - numbers whose exponent could make them overflow float64 (an exponent
//     of 200 or more: the Reader does not read number literals longer than
//     maxNumberLen, so no mantissa adds more than that many digits).
//
// Each window is searched for the few bytes that can start or end one of
// these (see anchors) next to the bytes they need (plausible), in one pass:
// 32 or 64 bytes at a time with AVX2 or AVX-512 where the CPU has them
// (anchors_amd64.s; with AVX-512 VBMI each byte's conditions are looked up
// in a table, anchors_vbmi.go), 32 with NEON on arm64 (anchors_arm64.s),
// byte by byte elsewhere; only those places are looked at closely.
type Prefilter struct {
	buf  []byte
	hits Hits
	max  int   // spans kept
	gap  int64 // spans this close are merged; grows when they are too many

	base  int64 // stream offset of the window's first new byte
	carry int   // bytes kept from the previous window in front of it
	first byte  // first byte that is not whitespace

	needle      bool     // a backward needle was seen, or need not be looked for
	untilSevere bool     // ScanUntilSevere
	vector      bool     // use the vector search where the CPU has it
	masks       []uint64 // its output: block index and mask of the 32-byte blocks holding anchors
	// kernel is the vector search: anchorMasks, or one of its kinds (tests)
	kernel func(b []byte, start, blocks int, out []uint64) int

	ignored   [][]byte  // the quoted keys of SearchRules.IgnoredStats
	entryLine []byte    // "\n" + 2*indent spaces + '"': the start of an entry's line
	topLine   []byte    // "\n" + indent spaces + '"': the start of a top-level member's line
	dataLine  bool      // the top-level "data" line was seen
	afterData bool      // a top-level member line after it (see topLevel)
	prevEntry entryMark // the last entry line before the window
	located   entryMark // the entry of the last hit located in this pass
	locatedAt int       // where in the window that hit is; -1 before the first
	opNames   map[string]string
}

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

// carryLen is how much of a window is kept in front of the next one. A
// candidate is judged in the window where contextLen bytes on both sides
// of it are present: candidates in the last contextLen bytes of a window
// wait for the next, where the carry gives them their left side. A number
// literal longer than maxNumberLen is not read as a value, so contextLen
// covers any that is.
const (
	contextLen = maxNumberLen + 28
	carryLen   = 2 * contextLen
)

// KeepSpans sets how many spans of hits the Prefilter keeps (0: 4096) from
// its next search on. Fewer spans merge more: more clean bytes lie in
// them, never fewer hits.
func (p *Prefilter) KeepSpans(max int) {
	if max <= 0 {
		max = 4096
	}
	p.max = max
}

// NewPrefilter returns a Prefilter reading through a window of the given
// size (0: 1 MiB) and keeping at most max spans of hits (0: 4096).
func NewPrefilter(window, max int, rules SearchRules) *Prefilter {
	if window <= 0 {
		window = 1 << 20
	}
	if max <= 0 {
		max = 4096
	}
	p := &Prefilter{buf: make([]byte, carryLen+window), max: max, vector: true, masks: make([]uint64, 1024), kernel: anchorMasks}
	for _, k := range rules.IgnoredStats {
		if len(k) > 0 && len(k) < 64 {
			p.ignored = append(p.ignored, []byte(`"`+k+`"`))
		}
	}
	return p
}

// Scan reads r to the end and returns what it found, valid until the next
// call.
func (p *Prefilter) Scan(r io.Reader) (*Hits, error) {
	p.reset()
	return p.read(r)
}

// ScanUntilSevere is Scan stopped at the end of the window that holds the
// first hit that may be NaN or +Inf (Hits.Partial), for a reader that
// needs no more than the entries up to it, and knows to read the whole
// file when those are not enough. Without such a hit it is Scan.
func (p *Prefilter) ScanUntilSevere(r io.Reader) (*Hits, error) {
	p.reset()
	p.untilSevere = true
	defer func() { p.untilSevere = false }()
	return p.read(r)
}

// reset readies the Prefilter for a new document.
func (p *Prefilter) reset() {
	p.hits.Spans, p.gap = p.hits.Spans[:0], 0
	p.hits.Whole = false
	p.hits.Tensors, p.hits.Stats = 0, 0
	p.hits.FirstSevere = -1
	p.hits.Located, p.hits.Forward, p.hits.LastEntry, p.hits.Indent = false, true, -1, 0
	p.hits.NoBackward, p.needle = false, false
	clear(p.hits.ForwardOps)
	p.hits.OtherForwardOps = 0
	p.entryLine, p.topLine = p.entryLine[:0], p.topLine[:0]
	p.dataLine, p.afterData = false, false
	p.prevEntry = entryMark{offset: -1}
	p.base, p.carry, p.first = 0, 0, 0
	p.hits.Partial, p.hits.Searched = false, 0
}

// read searches what r holds, from where the windows searched so far end
// to the end of r, one window of p.buf at a time.
func (p *Prefilter) read(r io.Reader) (*Hits, error) {
	for {
		n, err := io.ReadFull(r, p.buf[p.carry:])
		final := err == io.EOF || err == io.ErrUnexpectedEOF
		if n > 0 && !p.feed(p.buf[:p.carry+n], final) {
			p.hits.Whole = false
			return &p.hits, nil
		}
		if p.untilSevere && p.hits.FirstSevere >= 0 && err == nil {
			// the window's last contextLen bytes wait for the next
			p.hits.Partial, p.hits.Searched = true, p.base-contextLen
			p.hits.Located = len(p.entryLine) > 0 && p.hits.Located
			return &p.hits, nil
		}
		if final {
			if n == 0 && p.carry > 0 {
				// the last window was full: what it left to be judged with
				// the bytes after it is judged now
				p.window(p.buf[:p.carry], p.carry, true)
				p.afterData = p.afterData || !p.topLevel(p.buf[:p.carry], p.carry, true)
			}
			p.end()
			return &p.hits, nil
		}
		if err != nil {
			return &p.hits, err
		}
	}
}

// feed searches the window b: the p.carry bytes kept from the one before,
// then new bytes. It keeps the last carryLen bytes of b in p.buf for the
// next window, and reports false when the bytes are no JSON document
// (nothing more is to be searched: the reader says where it breaks).
func (p *Prefilter) feed(b []byte, final bool) bool {
	if p.first == 0 {
		if t := bytes.TrimLeft(b[p.carry:], " \t\r\n"); len(t) > 0 {
			p.first = t[0]
		}
	}
	if bytes.IndexByte(b[p.carry:], 0) >= 0 || (p.first != 0 && p.first != '{') {
		return false // a NUL byte is never valid JSON text
	}
	if p.base == 0 {
		p.detectIndent(b)
	}
	p.stats(b, p.carry)
	p.afterData = p.afterData || !p.topLevel(b, p.carry, final)
	p.window(b, p.carry, final)
	p.markLastEntry(b, len(b)-contextLen, final)
	// the carry holds any needle cut by the window's start
	p.needle = p.needle || p.hits.FirstSevere >= 0 || !p.hits.Forward || hasBackwardNeedle(b, p.vector)
	p.base += int64(len(b) - p.carry)
	keep := min(carryLen, len(b))
	copy(p.buf, b[len(b)-keep:])
	p.carry = keep
	return true
}

// end settles what only the whole document says.
func (p *Prefilter) end() {
	// laid out by json.dump(indent), with one "data" member, the last,
	// closed on its own line (see topLevel)
	p.hits.Whole = p.first == '{' && endsWhole(p.buf[:p.carry]) &&
		p.hits.Indent > 0 && p.dataLine && !p.afterData && endsWithData(p.buf[:p.carry], p.hits.Indent)
	p.hits.Located = len(p.entryLine) > 0 && p.hits.Located
	// (the last bytes of a full last window are judged after its feed)
	p.hits.NoBackward = !p.needle && p.hits.FirstSevere < 0 && p.hits.Forward
}

// endsWhole reports whether the end of a document is that of
// json.dump(indent=N): a last line "}" after a closing bracket ("}" of
// "data", or "{}" when it is empty).
func endsWhole(end []byte) bool {
	t := bytes.TrimRight(end, " \t\r\n")
	if !bytes.HasSuffix(t, []byte("\n}")) {
		return false
	}
	t = bytes.TrimRight(t[:len(t)-1], " \t\r\n")
	return len(t) > 0 && t[len(t)-1] == '}'
}

// stats counts the "Max" and "dtype" keys until a "Max" is seen.
func (p *Prefilter) stats(b []byte, carry int) {
	if p.hits.Stats > 0 {
		return
	}
	if i := bytes.Index(b, []byte(`"Max"`)); i >= 0 && i+5 > carry {
		p.hits.Stats++
	}
	if i := bytes.Index(b, []byte(`"dtype"`)); i >= 0 && i+7 > carry {
		p.hits.Tensors++
	}
}

// window scans b, whose first carry bytes were already seen at the end of
// the previous window; candidates in [lo, hi) are judged here, in the order
// of their positions, so that when the hits saturate every position before
// the last one kept was looked at.
func (p *Prefilter) window(b []byte, carry int, final bool) {
	lo, hi := max(0, carry-contextLen), len(b)-contextLen
	if final {
		hi = len(b)
	}
	if carry == 0 {
		lo = 0
	}
	off := p.base - int64(carry) // stream offset of b[0]
	p.located, p.locatedAt = entryMark{offset: -1}, -1
	if p.vector && haveAnchorMasks {
		p.windowVector(b, lo, hi, off)
		return
	}
	p.windowScalar(b, lo, hi, off)
}

// windowScalar looks at each byte of b[lo:hi] in turn: the search on any
// CPU, and the one the vector search is tested against.
func (p *Prefilter) windowScalar(b []byte, lo, hi int, off int64) {
	for k := lo; k < hi; k++ {
		if isAnchor[b[k]] && plausible(b, k) {
			p.candidate(b, k, off)
		}
	}
}

// windowVector finds the plausible anchors of b[lo:hi] 32 bytes at a time
// (anchorMasks), the bytes at the edges one by one.
func (p *Prefilter) windowVector(b []byte, lo, hi int, off int64) {
	k := lo
	if k < 2 {
		end := min(2, hi)
		p.windowScalar(b, k, end, off) // the vector search reads two bytes before
		k = end
	}
	for {
		blocks := min((hi-k)/32, (len(b)-2-k)/32, len(p.masks))
		if blocks <= 0 {
			break
		}
		n := p.kernel(b, k, blocks, p.masks)
		for _, jm := range p.masks[:n] {
			at := k + 32*int(jm>>32)
			for m := uint32(jm); m != 0; m &= m - 1 {
				p.candidate(b, at+bits.TrailingZeros32(m), off)
			}
		}
		k += 32 * blocks
	}
	p.windowScalar(b, k, hi, off)
}

// isAnchor marks the anchors.
var isAnchor = func() (t [256]bool) {
	for _, c := range anchors {
		t[c] = true
	}
	return t
}()

// plausible is a quick look at the bytes next to an anchor, which rules out
// most of the anchors in names and keys before candidate looks closely.
func plausible(b []byte, k int) bool {
	switch c := b[k]; c {
	case 'N':
		// NaN, or the end of a spelling such as "NAN" or "-NaN"
		return k+1 < len(b) && (b[k+1] == 'a' || b[k+1] == '"')
	case 'I':
		return k+1 < len(b) && b[k+1] == 'n'
	case 'e', 'E':
		// a negative exponent never overflows to infinity
		return k > 0 && isDigit(b[k-1]) && (k+1 >= len(b) || b[k+1] != '-')
	case '\\':
		return true
	}
	// before a closing quote, unless a colon follows (a member name such
	// as "Min"; but the is_nan key counts)
	if k+1 >= len(b) || b[k+1] != '"' {
		return false
	}
	name := k+2 < len(b) && b[k+2] == ':'
	return !name || k < 2 || (b[k-1] == 'a' && b[k-2] == 'n')
}

// anchors are the bytes that start a non-finite token (N, I), a \u escape,
// an exponent (e, E), or end a non-finite spelling before its closing quote
// (n, N, f, F, y, Y).
var anchors = []byte{'N', 'I', '\\', 'e', 'E', 'n', 'f', 'F', 'y', 'Y'}

// candidate judges the byte at b[k], which may start something non-finite.
func (p *Prefilter) candidate(b []byte, k int, off int64) {
	q, neg, ok := suspectAt(b, k)
	if !ok || p.ignoredStatOfTensor(b, q) {
		return
	}
	placed := p.hits.Forward && p.hits.FirstSevere < 0 // see Hits.Located
	p.hit(off+int64(q), neg)
	if len(p.entryLine) > 0 {
		p.hits.Located = true
		if !placed {
			return
		}
		e := p.entryBefore(b, q, off)
		if e.offset < 0 || !e.forward {
			p.hits.Forward = false
		} else if _, ok := p.hits.ForwardOps[e.op]; ok || len(p.hits.ForwardOps) < 64 {
			if p.hits.ForwardOps == nil {
				p.hits.ForwardOps = map[string]int{}
			}
			p.hits.ForwardOps[e.op]++
		} else {
			p.hits.OtherForwardOps++
		}
		p.hits.LastEntry = max(p.hits.LastEntry, e.offset)
	}
}

// detectIndent reads the indentation of json.dump(indent=N) from the
// document's first member line, to know how an entry's line starts.
func (p *Prefilter) detectIndent(b []byte) {
	if n := documentIndent(b); n > 0 {
		p.hits.Indent = n
		p.entryLine = entryLevelLine(p.entryLine[:0], n, '"')
		p.topLine = append(append(p.topLine[:0], '\n'), p.entryLine[1+n:]...) // one indentation
	}
}

// documentIndent is the indentation of json.dump(indent=N) output read
// from the first member line of the document b starts: "{", a newline,
// N spaces (at most 16) and a quote. 0 when b does not start so.
func documentIndent(b []byte) int {
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
			m.op = nameOf(op)
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

// suspectAt reports whether b[k] starts (or, before a quote, ends)
// something the Reader may read as non-finite, where it starts, and whether
// it can only be -inf.
func suspectAt(b []byte, k int) (start int, neg, ok bool) {
	switch c := b[k]; {
	case c == 'N':
		if bytes.HasPrefix(b[k:], []byte("NaN")) {
			return k, false, true
		}
	case c == 'I':
		if bytes.HasPrefix(b[k:], []byte("Infinity")) {
			return k, k > 0 && b[k-1] == '-', true
		}
		return 0, false, false
	case c == '\\':
		return k, false, k+1 < len(b) && b[k+1] == 'u'
	case c|0x20 == 'e':
		if q, ok := bigExponentAt(b, k); ok {
			return q, b[q] == '-', true
		}
		return 0, false, false
	}
	if c := b[k] | 0x20; (c == 'n' || c == 'f' || c == 'y') && k+1 < len(b) && b[k+1] == '"' {
		return spellingAt(b, k)
	}
	return 0, false, false
}

// ignoredStatOfTensor reports whether the value starting near b[k] is one
// of the ignored statistics of a tensor: the value of such a member ("Mean",
// "Norm") of an object that has a "Max" member before it.
func (p *Prefilter) ignoredStatOfTensor(b []byte, k int) bool {
	if len(p.ignored) == 0 {
		return false
	}
	// back from the value (a sign or digits may precede the anchor) to ':'
	j := k - 1
	for j >= 0 && (isDigit(b[j]) || b[j] == '-' || b[j] == '+' || b[j] == '.') {
		j--
	}
	for j >= 0 && isSpaceByte(b[j]) {
		j--
	}
	if j < 1 || b[j] != ':' {
		return false
	}
	j--
	for j >= 0 && isSpaceByte(b[j]) {
		j--
	}
	if j < 1 || b[j] != '"' {
		return false
	}
	var key []byte
	for _, q := range p.ignored {
		if j+1 >= len(q) && bytes.Equal(b[j+1-len(q):j+1], q) {
			key = q
			break
		}
	}
	if key == nil {
		return false
	}
	// a "Max" member earlier in the same object
	for i := j - len(key); i >= 0 && i > j-400; i-- {
		switch b[i] {
		case '{', '}':
			return false
		case '"':
			if i >= 4 && string(b[i-4:i+1]) == `"Max"` {
				return true
			}
		}
	}
	return false
}

// spellingAt reports whether the string closing at b[end+1] spells a
// non-finite value (or is the is_nan key of nan_check dumps), where its
// opening quote is, and whether it is -inf.
func spellingAt(b []byte, end int) (start int, neg, ok bool) {
	stop := end + 1 // the closing quote
	q := bytes.LastIndexByte(b[max(0, stop-10):stop], '"')
	if q < 0 {
		return 0, false, false
	}
	q += max(0, stop-10)
	s := b[q+1 : stop]
	if len(s) < 3 || len(s) > 9 || (q > 0 && b[q-1] == '\\') {
		return 0, false, false
	}
	if st := stringStat(s); st.Class != 0 || string(s) == "is_nan" {
		return q, st.Class == NegInf, true // q: the Mean/Norm check starts at the quote
	}
	return 0, false, false
}

// bigExponentAt reports whether b[i] ('e' or 'E') is the exponent mark of a
// number whose exponent is not negative and at least 200, and where the
// number starts.
func bigExponentAt(b []byte, i int) (int, bool) {
	if i == 0 || !isDigit(b[i-1]) {
		return 0, false
	}
	j := i + 1
	if j < len(b) && b[j] == '+' {
		j++
	}
	v, digits := 0, 0
	for ; j < len(b) && isDigit(b[j]); j++ {
		digits++
		if v < 1000 {
			v = v*10 + int(b[j]-'0')
		}
	}
	if digits == 0 || v < 200 || (j < len(b) && !isNumberEnd(b[j]) && b[j] != '"') {
		return 0, false
	}
	start := i
	for start > 0 && (isDigit(b[start-1]) || b[start-1] == '.' || b[start-1] == '-') {
		start--
	}
	if start > 0 && !isNumberStart(b[start-1]) && b[start-1] != '"' {
		return 0, false // inside a word, such as 0x7f5f11e79330
	}
	return start, true
}

// A JSON number follows one of these bytes, and is followed by one.
func isNumberStart(c byte) bool { return isSpaceByte(c) || c == ':' || c == ',' || c == '[' }
func isNumberEnd(c byte) bool   { return isSpaceByte(c) || c == ',' || c == ']' || c == '}' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// hit records a suspect token at off; neg says it can only be -inf.
func (p *Prefilter) hit(off int64, neg bool) {
	if !neg && (p.hits.FirstSevere < 0 || off < p.hits.FirstSevere) {
		p.hits.FirstSevere = off
	}
	sp := p.hits.Spans
	if n := len(sp); n > 0 && off >= sp[n-1].From {
		// the usual case, at or after the last span: no search
		switch last := &sp[n-1]; {
		case off <= last.To:
		case off-last.To <= p.gap:
			last.To = off
		default:
			p.hits.Spans = append(sp, Span{off, off})
			p.fit()
		}
		return
	}
	// the candidates of one window are found byte by byte, in turn, so a
	// hit may come before the last one
	i := p.hits.SpanAfter(off)
	switch {
	case i < len(sp) && sp[i].From <= off:
		return // in a span
	case i > 0 && off-sp[i-1].To <= p.gap:
		sp[i-1].To = off
		if i < len(sp) && sp[i].From-off <= p.gap {
			sp[i-1].To = sp[i].To
			sp = slices.Delete(sp, i, i+1)
		}
	case i < len(sp) && sp[i].From-off <= p.gap:
		sp[i].From = off
	default:
		sp = slices.Insert(sp, i, Span{off, off})
	}
	p.hits.Spans = sp
	p.fit()
}

// fit merges the spans closest to each other until they are no more than
// the Prefilter keeps.
func (p *Prefilter) fit() {
	for len(p.hits.Spans) > p.max {
		p.gap = max(2*p.gap, 256)
		p.hits.Spans = mergeSpans(p.hits.Spans, p.gap)
	}
}

// mergeSpans merges, in place, the spans that lie within gap bytes of the
// one before.
func mergeSpans(sp []Span, gap int64) []Span {
	out := sp[:1]
	for _, s := range sp[1:] {
		if last := &out[len(out)-1]; s.From-last.To <= gap {
			last.To = s.To
			continue
		}
		out = append(out, s)
	}
	return out
}
