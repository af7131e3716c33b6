package msprobewrite

import (
	"math"
	"strconv"
)

// appendPyFloat appends x the way Python's repr(float) spells it: the
// shortest digits that round-trip, fixed notation with a trailing ".0" for
// integral values when the decimal exponent is in [-4, 16), exponent notation
// ("1e-05", "1.5e+20") otherwise. Non-finite values are the caller's concern.
//
// The digits are produced once, in exponent notation, and moved into fixed
// notation by hand when the exponent asks for it.
func appendPyFloat(dst []byte, x float64) []byte {
	if x == 0 {
		if math.Signbit(x) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, x, 'e', -1, 64)
	e := len(dst) - 1
	for dst[e] != 'e' {
		e--
	}
	exp := 0
	for _, c := range dst[e+2:] {
		exp = exp*10 + int(c-'0')
	}
	if dst[e+1] == '-' {
		exp = -exp
	}
	if exp < -4 || exp >= 16 {
		return dst
	}
	// collect the significant digits: at most 17, plus the sign
	var digits [24]byte
	n := 0
	m := start
	if dst[m] == '-' {
		m++
	}
	for i := m; i < e; i++ {
		if c := dst[i]; c != '.' {
			digits[n] = c
			n++
		}
	}
	dst = dst[:m]
	if exp >= 0 {
		if n <= exp+1 {
			dst = append(dst, digits[:n]...)
			for i := n; i <= exp; i++ {
				dst = append(dst, '0')
			}
			return append(dst, ".0"...)
		}
		dst = append(dst, digits[:exp+1]...)
		dst = append(dst, '.')
		return append(dst, digits[exp+1:n]...)
	}
	dst = append(dst, "0."...)
	for i := -1; i > exp; i-- {
		dst = append(dst, '0')
	}
	return append(dst, digits[:n]...)
}

// pyFloat returns appendPyFloat as a string.
func pyFloat(x float64) string {
	return string(appendPyFloat(nil, x))
}
