package nonfinite

import (
	"math"
	"strings"
)

// Class is a set of non-finite values: what a tensor, a statistic or a
// printed number holds besides finite numbers. The zero Class is finite.
type Class uint8

// The non-finite values.
const (
	NaN Class = 1 << iota
	PosInf
	NegInf

	// Inf is either infinity.
	Inf = PosInf | NegInf
)

// Of classifies a float.
func Of(f float64) Class {
	switch {
	case math.IsNaN(f):
		return NaN
	case math.IsInf(f, 1):
		return PosInf
	case math.IsInf(f, -1):
		return NegInf
	}
	return 0
}

// Float is the value of a single-valued class: NaN, +Inf or -Inf (0 for
// the finite class, NaN for a mixed one).
func (c Class) Float() float64 {
	switch c {
	case 0:
		return 0
	case PosInf:
		return math.Inf(1)
	case NegInf:
		return math.Inf(-1)
	}
	return math.NaN()
}

// String writes the class the way the verdict does: "finite", "nan",
// "+inf", "-inf", or several joined by commas ("nan,-inf").
func (c Class) String() string {
	switch c {
	case 0:
		return "finite"
	case NaN:
		return "nan"
	case PosInf:
		return "+inf"
	case NegInf:
		return "-inf"
	}
	var parts []string
	if c&NaN != 0 {
		parts = append(parts, "nan")
	}
	if c&PosInf != 0 {
		parts = append(parts, "+inf")
	}
	if c&NegInf != 0 {
		parts = append(parts, "-inf")
	}
	return strings.Join(parts, ",")
}

// Kind is the verdict's word for a class: "nan" when it holds NaN, "inf"
// when it holds only infinities, "" when it is finite.
func (c Class) Kind() string {
	switch {
	case c&NaN != 0:
		return "nan"
	case c&Inf != 0:
		return "inf"
	}
	return ""
}

// ParseClass reads what String writes; ok is false for anything else.
func ParseClass(s string) (c Class, ok bool) {
	if s == "finite" {
		return 0, true
	}
	for _, p := range strings.Split(s, ",") {
		switch p {
		case "nan":
			c |= NaN
		case "+inf", "inf":
			c |= PosInf
		case "-inf":
			c |= NegInf
		default:
			return 0, false
		}
	}
	return c, true
}
