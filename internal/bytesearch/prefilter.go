package bytesearch

import (
	"bytes"
	"io"
	"math/bits"
)

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
	off       int64     // stream offset of the window's first byte, for the candidates
	maxOf     maxMember // the "Max" member of the tensor judged last (ignoredStatOfTensor)
	groups    GroupRanks
}

// maxNumberLen is the longest number literal package dump's Reader reads
// as a number (a longer one is no statistic msprobe writes, and is read as
// a string): only a literal this long or shorter can overflow to a hit.
// TestMaxNumberLenIsTheReaders holds the two to the same length.
const maxNumberLen = 100

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
	p := &Prefilter{buf: make([]byte, carryLen+window), max: max, vector: true, masks: make([]uint64, 1024), kernel: anchorMasks,
		maxOf: maxMember{quote: -1}}
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
	p.maxOf = maxMember{quote: -1}
	p.hits.Partial, p.hits.Searched = false, 0
	p.groups.Reset()
	p.hits.Groups, p.hits.GroupsTo = &p.groups, 0
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
				p.groups.Window(p.buf[:p.carry], p.carry, p.base-int64(p.carry), true, p.vector)
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
	p.groups.Window(b, p.carry, p.base-int64(p.carry), final, p.vector)
	// the carry holds any needle cut by the window's start
	p.needle = p.needle || p.hits.FirstSevere >= 0 || !p.hits.Forward || hasBackwardNeedle(b, p.vector)
	p.base += int64(len(b) - p.carry)
	p.hits.GroupsTo = p.base
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
	p.off = off
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
