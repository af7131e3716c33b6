package trainlog

import (
	"math"
	"strconv"

	"github.com/nanhunt/nanhunt/internal/nonfinite"
)

// Kind says what a [Value] holds.
type Kind uint8

// The kinds of a Value.
const (
	Absent Kind = iota // not printed, or not a number
	Finite             // a finite number
	NaN                // not a number, in any spelling
	PosInf             // +Inf
	NegInf             // -Inf
)

var kindNames = [...]string{Absent: "absent", Finite: "finite", NaN: "nan", PosInf: "inf", NegInf: "-inf"}

// String returns "absent", "finite", "nan", "inf" or "-inf".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// NonFinite reports whether k is NaN, PosInf or NegInf.
func (k Kind) NonFinite() bool { return k == NaN || k == PosInf || k == NegInf }

// Value is a loss or grad norm as printed: absent, finite, NaN or ±Inf.
type Value struct {
	// Kind says which of the above the value is.
	Kind Kind
	// V is the number; it is 0 when Kind is Absent, NaN when Kind is NaN
	// and ±Inf when Kind is PosInf or NegInf.
	V float64
}

// NonFinite reports whether the value was printed and is NaN or ±Inf.
func (v Value) NonFinite() bool { return v.Kind.NonFinite() }

// String returns the number in Go's shortest form, "nan", "inf", "-inf",
// or "absent".
func (v Value) String() string {
	if v.Kind == Finite {
		return strconv.FormatFloat(v.V, 'g', -1, 64)
	}
	return v.Kind.String()
}

// MarshalJSON writes null for an absent value, a number for a finite one
// and the strings "nan", "inf" and "-inf" otherwise.
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.Kind {
	case Absent:
		return []byte("null"), nil
	case Finite:
		return strconv.AppendFloat(nil, v.V, 'g', -1, 64), nil
	}
	return []byte(`"` + v.Kind.String() + `"`), nil
}

// floatValue classifies a float64.
func floatValue(f float64) Value {
	switch {
	case math.IsNaN(f):
		return Value{NaN, f}
	case math.IsInf(f, 1):
		return Value{PosInf, f}
	case math.IsInf(f, -1):
		return Value{NegInf, f}
	}
	return Value{Finite, f}
}

// parseValue reads one number token as Python prints it: an optional sign,
// then nan, inf or infinity (any case), or a decimal number with an optional
// exponent. A number too large for a float64 is ±Inf. Anything else,
// including an empty token, is Absent.
func parseValue(b []byte) Value {
	if c, ok := nonfinite.Parse(b); ok {
		return floatValue(c.Float())
	}
	rest := b
	if len(rest) > 0 && (rest[0] == '+' || rest[0] == '-') {
		rest = rest[1:]
	}
	if !isDecimal(rest) {
		return Value{}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !math.IsInf(f, 0) {
		return Value{}
	}
	return floatValue(f)
}

// isDecimal reports whether b is digits[.digits] or .digits, followed by an
// optional exponent e[+-]digits.
func isDecimal(b []byte) bool {
	i, n := 0, 0
	for i < len(b) && isDigit(b[i]) {
		i++
		n++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
			n++
		}
	}
	if n == 0 {
		return false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i == d {
			return false
		}
	}
	return i == len(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// maxCount bounds the iterations, steps and counters read from a log, so
// that adding an offset can never overflow.
const maxCount = 1_000_000_000_000_000

// parseCount reads a non-negative decimal integer of at most maxCount; ok is
// false for anything else.
func parseCount(b []byte) (n int, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int(c-'0')
		if n > maxCount {
			return 0, false
		}
	}
	return n, true
}

// parseJSONNumber reads a JSON number literal; a literal too large for a
// float64 is ±Inf, as Python reads it.
func parseJSONNumber(b []byte) (float64, error) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && math.IsInf(f, 0) {
		return f, nil
	}
	return f, err
}
