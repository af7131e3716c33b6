package monitor

import (
	"errors"
	"math"
	"strconv"

	"github.com/nanhunt/nanhunt/internal/nonfinite"
)

// valClass is what a statistic cell holds.
type valClass uint8

const (
	vMissing valClass = iota // empty cell or no such column
	vFinite
	vNaN
	vPosInf
	vNegInf
	vInvalid // not a number
)

// cell is a classified statistic: its class, and for finite values whether
// the value is zero and whether it is negative.
type cell struct {
	class valClass
	zero  bool
	neg   bool
}

// positive reports whether the cell holds a number greater than zero.
func (c cell) positive() bool {
	return c.class == vPosInf || (c.class == vFinite && !c.zero && !c.neg)
}

// classify reads a statistic the way classifySlow does (strconv.ParseFloat,
// a value out of range counts as the infinity or zero it rounds to, and
// the non-finite spellings of package nonfinite) without allocating
// for plain decimal numbers and the spellings nan, inf and -inf. An empty
// cell is vMissing.
func classify(b []byte) cell {
	if len(b) == 0 {
		return cell{class: vMissing}
	}
	if c, ok := classifyFast(b); ok {
		return c
	}
	return classifySlow(b)
}

// classifyFast handles plain decimals of at most 32 bytes with an exponent
// of at most 250 (no overflow or underflow is possible there) and the
// special spellings; ok is false when strconv must decide.
func classifyFast(b []byte) (cell, bool) {
	i := 0
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		i = 1
	}
	if i < len(b) && (b[i]|0x20 == 'n' || b[i]|0x20 == 'i') {
		switch c, _ := nonfinite.Parse(b); c {
		case nonfinite.NaN:
			return cell{class: vNaN}, true
		case nonfinite.PosInf:
			return cell{class: vPosInf}, true
		case nonfinite.NegInf:
			return cell{class: vNegInf}, true
		}
		return cell{class: vInvalid}, true
	}
	if len(b) > 32 {
		return cell{}, false
	}
	digits, nonzero := 0, false
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		digits++
		nonzero = nonzero || b[i] != '0'
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			digits++
			nonzero = nonzero || b[i] != '0'
		}
	}
	if digits == 0 {
		return cell{}, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		exp, ed := 0, 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			exp = exp*10 + int(b[i]-'0')
			ed++
			if ed > 3 {
				return cell{}, false
			}
		}
		if ed == 0 || exp > 250 {
			return cell{}, false
		}
	}
	if i != len(b) {
		return cell{}, false
	}
	return cell{class: vFinite, zero: !nonzero, neg: neg && nonzero}, true
}

// classifySlow is the reference: strconv.ParseFloat, with a value out of
// range taken as the infinity (or zero) it rounds to, and the non-finite
// spellings of package nonfinite, which also take a signed NaN ("-nan",
// as C's printf writes it) that ParseFloat refuses.
func classifySlow(b []byte) cell {
	if len(b) == 0 {
		return cell{class: vMissing}
	}
	if c, ok := boolCell(b); ok {
		return c
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		switch c, _ := nonfinite.Parse(b); c {
		case nonfinite.NaN:
			return cell{class: vNaN}
		case nonfinite.PosInf:
			return cell{class: vPosInf}
		case nonfinite.NegInf:
			return cell{class: vNegInf}
		}
		return cell{class: vInvalid}
	}
	switch {
	case math.IsNaN(f):
		return cell{class: vNaN}
	case math.IsInf(f, 1):
		return cell{class: vPosInf}
	case math.IsInf(f, -1):
		return cell{class: vNegInf}
	}
	return cell{class: vFinite, zero: f == 0, neg: f < 0}
}

// boolCell reads the min or max of a boolean tensor (a padding or
// attention mask among the monitor's targets): TrainerMon takes
// torch.min/torch.max of it, and pandas writes the Python bool as True or
// False. They are the finite values 1 and 0.
func boolCell(b []byte) (cell, bool) {
	switch string(b) {
	case "True":
		return cell{class: vFinite}, true
	case "False":
		return cell{class: vFinite, zero: true}, true
	}
	return cell{}, false
}

// parseInt reads a non-negative or negative decimal integer, also written
// as a float with a zero fraction ("3.0"), as pandas does for integer
// columns that held a missing value.
func parseInt(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	i, neg := 0, false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		i = 1
	}
	if i == len(b) {
		return 0, false
	}
	n := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	if i < len(b) {
		if b[i] != '.' || i+1 == len(b) {
			return 0, false
		}
		for i++; i < len(b); i++ {
			if b[i] != '0' {
				return 0, false
			}
		}
	}
	if neg {
		n = -n
	}
	return n, true
}
