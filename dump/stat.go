package dump

import (
	"math"
	"strconv"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
)

// stat reads a statistic token.
func (r *Reader) stat(tok jsonlex.Token) Stat {
	switch tok.Kind {
	case jsonlex.Number:
		return numberStat(tok.Bytes, r.opt.Details)
	case jsonlex.NaN:
		return Stat{Kind: StatNumber, Class: nonfinite.NaN, Value: math.NaN()}
	case jsonlex.PosInf:
		return Stat{Kind: StatNumber, Class: nonfinite.PosInf, Value: math.Inf(1)}
	case jsonlex.NegInf:
		return Stat{Kind: StatNumber, Class: nonfinite.NegInf, Value: math.Inf(-1)}
	case jsonlex.True:
		return Stat{Kind: StatBool, Value: 1}
	case jsonlex.False:
		return Stat{Kind: StatBool}
	case jsonlex.Null:
		return Stat{Kind: StatNull}
	case jsonlex.String:
		if st := stringStat(tok.Bytes); st.Class != 0 {
			return st
		}
		if isNumberLiteral(tok.Bytes) {
			return numberStat(tok.Bytes, r.opt.Details) // a number written as a string: "0.001"
		}
		return Stat{Kind: StatString}
	}
	return Stat{}
}

// isNumberLiteral reports whether b is a JSON number literal (optionally
// with a leading '+', as Python's str() never writes but hand-made files do).
func isNumberLiteral(b []byte) bool {
	if len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	digits, i := 0, 0
	for ; i < len(b) && isDigit(b[i]); i++ {
		digits++
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && isDigit(b[i]); i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(b) && isDigit(b[i]); i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(b)
}

// maxNumberLen is the longest number literal read as a value: Python's
// repr of a float is at most 24 bytes; a literal of 100 digits is not a
// statistic msprobe writes, and is read as unknown rather than overflowing.
const maxNumberLen = 100

// numberStat classifies a JSON number literal. Any literal is finite unless
// it overflows float64 (1e309), which only a long literal or one with an
// exponent can do; only those, or all with details, are parsed.
func numberStat(lit []byte, details bool) Stat {
	if !details && len(lit) < 24 && !mayOverflow(lit) {
		return Stat{Kind: StatNumber}
	}
	if len(lit) > maxNumberLen {
		return Stat{Kind: StatString} // no statistic is written like this
	}
	v, _ := strconv.ParseFloat(string(lit), 64)
	st := Stat{Kind: StatNumber, Value: v}
	switch {
	case math.IsInf(v, 1):
		st.Class = nonfinite.PosInf
	case math.IsInf(v, -1):
		st.Class = nonfinite.NegInf
	}
	return st
}

// mayOverflow reports whether a number literal shorter than 24 bytes may
// be too large for a float64 (see exponentMayOverflow).
func mayOverflow(lit []byte) bool {
	for i, c := range lit {
		if c|0x20 == 'e' {
			return exponentMayOverflow(lit[i+1:])
		}
	}
	return false
}

// exponentMayOverflow reports whether the exponent exp (what follows the
// 'e' of a literal shorter than 24 bytes) may make it too large for a
// float64: only when it is not negative and has three digits or more
// (twenty digits times 1e99 is finite).
func exponentMayOverflow(exp []byte) bool {
	if len(exp) > 0 && (exp[0] == '-' || exp[0] == '+') {
		if exp[0] == '-' {
			return false
		}
		exp = exp[1:]
	}
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:] // e+0400 is e+400
	}
	return len(exp) >= 3
}

// stringStat reads the string spellings older dumps and mocks use for
// non-finite statistics: "nan", "inf", "-inf", "Infinity", ...
func stringStat(b []byte) Stat {
	c, ok := nonfinite.Parse(b)
	if !ok {
		return Stat{}
	}
	return Stat{Kind: StatNumber, Class: c, Value: c.Float()}
}
