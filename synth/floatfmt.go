package synth

import (
	"math"
	"strconv"
)

// appendPyFloat appends x the way Python's repr(float) spells it: the
// shortest digits that round-trip, fixed notation with a trailing ".0" for
// integral values when the decimal exponent is in [-4, 16), exponent notation
// ("1e-05", "1.5e+20") otherwise. Non-finite values are the caller's concern.
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
	neg := dst[e+1] == '-'
	for _, c := range dst[e+2:] {
		exp = exp*10 + int(c-'0')
	}
	if neg {
		exp = -exp
	}
	if exp < -4 || exp >= 16 {
		return dst
	}
	dst = strconv.AppendFloat(dst[:start], x, 'f', -1, 64)
	for _, c := range dst[start:] {
		if c == '.' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

// pyFloat returns appendPyFloat as a string.
func pyFloat(x float64) string {
	return string(appendPyFloat(nil, x))
}
