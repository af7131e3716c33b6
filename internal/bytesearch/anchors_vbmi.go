//go:build amd64

package bytesearch

// anchorTable holds, for anchorMasksVBMI, the conditions of plausible that
// each byte meets in each of the five places plausible looks at: the
// anchor itself, the byte after it, the one before, two before, two after.
// A condition is a bit; a byte is an anchor plausible accepts when the
// five bytes around it share one. Rows are indexed by the byte's low
// seven bits; high holds, for each place, what a byte of 0x80 or more
// meets (only there do rows and bytes differ).
type anchorTable struct {
	self, after, before, before2, after2 [128]byte
	high                                 [64]byte
}

// The conditions, one bit each.
const (
	condNaN      = 1 << iota // N before a or "
	condInf                  // I before n
	condEscape               // a backslash
	condExponent             // e or E after a digit, not before '-'
	condValue                // n f F y Y before a quote that no ':' follows
	condIsNaN                // n f F y Y before a quote, after "na" (the is_nan key)
	condAll      = 1<<iota - 1
)

// conditions is what the byte c meets in each place.
func conditions(c int) (self, after, before, before2, after2 byte) {
	switch c {
	case 'N':
		self = condNaN
	case 'I':
		self = condInf
	case '\\':
		self = condEscape
	case 'e', 'E':
		self = condExponent
	case 'n', 'f', 'F', 'y', 'Y':
		self = condValue | condIsNaN
	}
	after = condEscape
	switch c {
	case 'a':
		after |= condNaN
	case '"':
		after |= condNaN | condValue | condIsNaN
	case 'n':
		after |= condInf
	}
	if c != '-' {
		after |= condExponent
	}
	before = condAll &^ (condExponent | condIsNaN)
	if c >= '0' && c <= '9' {
		before |= condExponent
	}
	if c == 'a' {
		before |= condIsNaN
	}
	before2 = condAll &^ condIsNaN
	if c == 'n' {
		before2 |= condIsNaN
	}
	after2 = condAll &^ condValue
	if c != ':' {
		after2 |= condValue
	}
	return
}

var anchorTables = func() *anchorTable {
	t := new(anchorTable)
	for c := range 128 {
		t.self[c], t.after[c], t.before[c], t.before2[c], t.after2[c] = conditions(c)
	}
	t.high[0], t.high[1], t.high[2], t.high[3], t.high[4] = conditions(0x80)
	return t
}()

// anchorMasksVBMI is in anchors_amd64.s.
//
//go:noescape
func anchorMasksVBMI(b *byte, blocks int, out *uint64, t *anchorTable) int

// anchorMasksTable is anchorMasks with AVX-512 VBMI table look-ups, two
// blocks at a time; an odd last block goes to AVX2.
func anchorMasksTable(b []byte, start, blocks int, out []uint64) int {
	return anchorMasksPairs(b, start, blocks, out, func(b *byte, n int, out *uint64) int {
		return anchorMasksVBMI(b, n, out, anchorTables)
	})
}
