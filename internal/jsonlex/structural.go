package jsonlex

import "math/bits"

// The structural index: what SkipValueFast needs of 64 bytes at a time,
// found for all of them at once (one vector pass where the CPU has one,
// eight bytes at a time elsewhere), then walked with bit operations, the
// way simdjson finds the structure of a document before it parses it.

// blockMasks holds, for one 64-byte block, one bit per byte (bit i for the
// block's byte i) of the bytes a skip reacts to: quotes, backslashes,
// opening brackets ('{' '[') and closing ones ('}' ']'). The bits say
// nothing of context: whether a quote is escaped, or a bracket inside a
// string, is decided by the walk.
type blockMasks struct {
	quote, backslash, open, close uint64
}

// maskBlocks is how many blocks the index holds at once: 4 KiB of input,
// 2 KiB of masks. A skipped dump entry is a few hundred bytes to a few KiB,
// and successive skips go on in the same blocks.
const maskBlocks = 64

// structIndex is the index of part of the lexer's window: masks[j] is the
// block at buf[64*(from+j):], for the window whose stream offset is base.
type structIndex struct {
	masks []blockMasks
	base  int64
	from  int
	valid bool
}

// blockAt returns the masks of block k (buf[64k:64k+64], zero bytes past
// the end of buf), indexing the blocks from k on when they are not held.
func (x *structIndex) blockAt(buf []byte, base int64, k int) *blockMasks {
	if !x.valid || x.base != base || k < x.from || k >= x.from+len(x.masks) {
		if x.masks == nil {
			x.masks = make([]blockMasks, 0, maskBlocks)
		}
		n := min(maskBlocks, (len(buf)-64*k+63)/64)
		x.masks = x.masks[:n]
		full := min(n, (len(buf)-64*k)/64)
		classify(buf[64*k:64*(k+full)], x.masks[:full])
		if full < n {
			var pad [64]byte
			copy(pad[:], buf[64*(k+full):])
			classifyGeneric(pad[:], x.masks[full:])
		}
		x.base, x.from, x.valid = base, k, true
	}
	return &x.masks[k-x.from]
}

// classify fills m[j] for the block b[64j:64j+64]; len(b) is 64*len(m).
func classify(b []byte, m []blockMasks) {
	if len(m) == 0 {
		return
	}
	if haveClassifyVector {
		classifyVector(b, m)
		return
	}
	classifyGeneric(b, m)
}

// classifyGeneric is classify in plain Go, eight bytes at a time: the
// reference the vector path is tested against, and the path on CPUs
// without one.
func classifyGeneric(b []byte, m []blockMasks) {
	const ones = 0x0101010101010101
	for j := range m {
		blk := b[64*j : 64*j+64]
		var q, bs, op, cl uint64
		for w := 0; w < 8; w++ {
			x := le64(blk[8*w:])
			y := x | 0x20*ones
			zq, zb := zeroBytes(x^'"'*ones), zeroBytes(x^'\\'*ones)
			zo, zc := zeroBytes(y^'{'*ones), zeroBytes(y^'}'*ones)
			if zq|zb|zo|zc == 0 {
				continue // most words of a dump: digits, letters, spaces
			}
			sh := uint(8 * w)
			q |= gather(zq) << sh
			bs |= gather(zb) << sh
			op |= gather(zo) << sh
			cl |= gather(zc) << sh
		}
		m[j] = blockMasks{q, bs, op, cl}
	}
}

func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// zeroBytes has the high bit of each byte of x that is zero set, and no
// other bit (exact: no carry crosses a byte).
func zeroBytes(x uint64) uint64 {
	const lo7, hi1 = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	return ^(((x & lo7) + lo7) | x) & hi1
}

// gather packs the high bits of the eight bytes of h (and no other bits)
// into the low eight bits, byte i to bit i.
func gather(h uint64) uint64 {
	return ((h >> 7) * 0x0102040810204080) >> 56
}

// skipState is where a skip stands: brackets open, and whether it is inside
// a string, just after a backslash there.
type skipState struct {
	depth    int
	inString bool
	escaped  bool // inside a string, the next byte is escaped
}

// scan goes on with the skip from buf[pos:], the window at stream offset
// base. It returns the index just past the bracket that closes the value,
// or len(buf) with the state at the window's end when it does not close.
func (s *skipState) scan(x *structIndex, buf []byte, base int64, pos int) int {
	if !haveClassifyVector {
		return s.scanWords(buf, pos)
	}
	for pos < len(buf) {
		k := pos >> 6
		m := x.blockAt(buf, base, k)
		from := uint(pos & 63)
		start := k << 6
		keep := ^uint64(0) << from
		if m.backslash&keep != 0 || s.escaped {
			if end, ok := s.scanBytes(buf, pos, min(start+64, len(buf))); ok {
				return end
			}
			pos = start + 64
			continue
		}
		// No backslash: every quote in the block opens or closes a string.
		inStr := prefixXor(m.quote & keep)
		if s.inString {
			inStr = ^inStr
		}
		open := m.open & keep &^ inStr
		shut := m.close & keep &^ inStr
		if s.depth > bits.OnesCount64(shut) {
			s.depth += bits.OnesCount64(open) - bits.OnesCount64(shut)
		} else {
			for both := open | shut; both != 0; both &= both - 1 {
				bit := both & -both
				if open&bit != 0 {
					s.depth++
					continue
				}
				if s.depth--; s.depth == 0 {
					return start + bits.TrailingZeros64(both) + 1
				}
			}
		}
		s.inString = inStr>>63 != 0
		pos = start + 64
	}
	return len(buf)
}

// scanBytes is scan one byte at a time over buf[pos:end], for blocks with
// backslashes. It reports the index past the closing bracket when it finds
// it there.
func (s *skipState) scanBytes(buf []byte, pos, end int) (int, bool) {
	for ; pos < end; pos++ {
		c := buf[pos]
		if s.inString {
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
		case '}', ']':
			if s.depth--; s.depth == 0 {
				return pos + 1, true
			}
		}
	}
	return end, false
}

// prefixXor sets bit i to the parity of the bits 0..i of q: for a mask of
// quotes, the bytes from an opening quote up to (not including) its
// closing one.
func prefixXor(q uint64) uint64 {
	q ^= q << 1
	q ^= q << 2
	q ^= q << 4
	q ^= q << 8
	q ^= q << 16
	q ^= q << 32
	return q
}

// scanWords is scan without the index, for CPUs where the index would be
// built eight bytes at a time: there a jump to the next byte that matters,
// eight bytes at a time, is faster.
func (s *skipState) scanWords(buf []byte, pos int) int {
	for pos < len(buf) {
		if s.inString {
			if s.escaped {
				s.escaped = false
				pos++
				continue
			}
			if pos = nextInString(buf, pos); pos >= len(buf) {
				break
			}
			if buf[pos] == '\\' {
				s.escaped = true
			} else {
				s.inString = false
			}
			pos++
			continue
		}
		if pos = nextStructural(buf, pos); pos >= len(buf) {
			break
		}
		c := buf[pos]
		pos++
		switch c {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
		case '}', ']':
			if s.depth--; s.depth == 0 {
				return pos
			}
		}
	}
	return len(buf)
}

// nextStructural returns the index of the first byte at or after pos that
// may be a quote or a bracket ('[', ']', '{', '}' differ only in the bits
// 0x20, 0x04 and 0x02, which the mask clears; a few letters share the
// pattern and are told apart by the caller), or len(buf).
func nextStructural(buf []byte, pos int) int {
	const ones = 0x0101010101010101
	for ; pos+8 <= len(buf); pos += 8 {
		w := le64(buf[pos:])
		if m := zeroBytes(w^'"'*ones) | zeroBytes(w&^(0x26*ones)^0x59*ones); m != 0 {
			return pos + bits.TrailingZeros64(m)>>3
		}
	}
	for ; pos < len(buf); pos++ {
		if c := buf[pos]; c == '"' || c|0x20 == '{' || c|0x20 == '}' {
			return pos
		}
	}
	return pos
}

// nextInString returns the index of the first quote or backslash at or
// after pos, or len(buf), eight bytes at a time.
func nextInString(buf []byte, pos int) int {
	const ones = 0x0101010101010101
	for ; pos+8 <= len(buf); pos += 8 {
		w := le64(buf[pos:])
		if m := zeroBytes(w^'"'*ones) | zeroBytes(w^'\\'*ones); m != 0 {
			return pos + bits.TrailingZeros64(m)>>3
		}
	}
	for ; pos < len(buf) && buf[pos] != '"' && buf[pos] != '\\'; pos++ {
	}
	return pos
}
