package nonfinite

// Parse reads a spelling of a non-finite value: nan, inf and infinity in
// any case, with an optional sign ("-nan" and "+nan" are NaN). ok is false
// for anything else, numbers included. It does not allocate.
func Parse(b []byte) (c Class, ok bool) {
	if len(b) < 3 || len(b) > 9 {
		return 0, false
	}
	neg := false
	switch b[0] {
	case '-':
		neg = true
		b = b[1:]
	case '+':
		b = b[1:]
	}
	switch {
	case equalFold(b, "nan"):
		return NaN, true
	case equalFold(b, "inf"), equalFold(b, "infinity"):
		if neg {
			return NegInf, true
		}
		return PosInf, true
	}
	return 0, false
}

// ParseString is Parse for a string.
func ParseString(s string) (Class, bool) {
	if len(s) < 3 || len(s) > 9 {
		return 0, false
	}
	var buf [9]byte
	return Parse(buf[:copy(buf[:], s)])
}

// equalFold reports whether b is the lower-case ASCII word w in any case.
func equalFold(b []byte, w string) bool {
	if len(b) != len(w) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}
