package reference

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// holds is the set of non-finite values a tensor or argument holds, one
// bit a value: NaN, +inf, -inf.
type holds uint8

// The three non-finite values (README 1).
const (
	holdNaN    holds = 0b001
	holdPosInf holds = 0b010
	holdNegInf holds = 0b100
)

// has reports whether h holds any value of x.
func (h holds) has(x holds) bool { return h&x > 0 }

// holdsOf is what one number holds.
func holdsOf(x float64) holds {
	switch {
	case math.IsNaN(x):
		return holdNaN
	case math.IsInf(x, 1):
		return holdPosInf
	case math.IsInf(x, -1):
		return holdNegInf
	}
	return 0
}

// numericString is a number written as a string ("0.001", "-1e5").
var numericString = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// readNumber reads a statistic: a JSON number, a bare NaN/Infinity/-Infinity
// token, a string "nan"/"inf"/"infinity" in any case with an optional
// sign, or a numeric string. Anything else is unknown (ok false).
func readNumber(n *jsonoracle.Node) (float64, bool) {
	if n == nil {
		return 0, false
	}
	switch n.Kind {
	case jsonoracle.NaN:
		return math.NaN(), true
	case jsonoracle.PosInf:
		return math.Inf(1), true
	case jsonoracle.NegInf:
		return math.Inf(-1), true
	case jsonoracle.Number:
		return parseDecimal(n.Literal)
	case jsonoracle.String:
		return parseStringNumber(n.Literal)
	}
	return 0, false
}

// parseDecimal parses a decimal literal; beyond float64 it is an infinity,
// below the smallest float64 it is zero.
func parseDecimal(s string) (float64, bool) {
	x, err := strconv.ParseFloat(s, 64)
	if err == nil {
		return x, true
	}
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return x, true // ±Inf or ±0, as ParseFloat rounds
	}
	return 0, false
}

// parseStringNumber reads the string spellings of a statistic.
func parseStringNumber(s string) (float64, bool) {
	body := strings.ToLower(s)
	sign := 1.0
	switch {
	case strings.HasPrefix(body, "+"):
		body = body[1:]
	case strings.HasPrefix(body, "-"):
		body, sign = body[1:], -1
	}
	switch body {
	case "nan":
		return math.NaN(), true
	case "inf", "infinity":
		return math.Inf(int(sign)), true
	}
	if numericString.MatchString(s) {
		return parseDecimal(s)
	}
	return 0, false
}

// member returns the last member of an object with that exact name.
func member(n *jsonoracle.Node, name string) *jsonoracle.Node {
	if n == nil || n.Kind != jsonoracle.Object {
		return nil
	}
	var v *jsonoracle.Node
	for _, m := range n.Members {
		if m.Name == name {
			v = m.Value
		}
	}
	return v
}

// statMember returns the member spelled name in any case, preferring the
// exact spelling.
func statMember(n *jsonoracle.Node, name string) (*jsonoracle.Node, bool) {
	if v := member(n, name); v != nil {
		return v, true
	}
	for _, m := range n.Members {
		if strings.EqualFold(m.Name, name) {
			return m.Value, true
		}
	}
	return nil, false
}

// leaf is one tensor or non-tensor argument found in a slot.
type leaf struct {
	holds        holds
	tensor       bool // a tensor with Max or Min
	statless     bool // a tensor without Max and Min
	nonTensor    bool // {"type": ..., "value": ...} or a bare number
	requiresGrad bool
}

// leaves walks a value and returns its tensors and arguments: arrays and
// plain objects are walked into; an object with Max or Min is a tensor; an
// object with a "type" is a non-tensor argument when it has a "value", else
// it is opaque (a stat-less tensor when its type names a tensor).
func leaves(n *jsonoracle.Node) []leaf {
	var out []leaf
	var walk func(n *jsonoracle.Node)
	walk = func(n *jsonoracle.Node) {
		if n == nil {
			return
		}
		switch n.Kind {
		case jsonoracle.Array:
			for _, e := range n.Elems {
				walk(e)
			}
		case jsonoracle.Object:
			maxN, hasMax := statMember(n, "Max")
			minN, hasMin := statMember(n, "Min")
			if hasMax || hasMin {
				l := leaf{tensor: true}
				if x, ok := readNumber(maxN); ok {
					l.holds |= holdsOf(x)
				}
				if x, ok := readNumber(minN); ok {
					l.holds |= holdsOf(x)
				}
				if rg := member(n, "requires_grad"); rg != nil && rg.Kind == jsonoracle.Bool && rg.Bool {
					l.requiresGrad = true
				}
				out = append(out, l)
				return
			}
			typ := member(n, "type")
			if typ == nil {
				for _, m := range n.Members {
					walk(m.Value)
				}
				return
			}
			if val := member(n, "value"); val != nil {
				l := leaf{nonTensor: true}
				if !(typ.Kind == jsonoracle.String && typ.Literal == "str") {
					if x, ok := readNumber(val); ok {
						l.holds = holdsOf(x)
					}
				}
				out = append(out, l)
				return
			}
			if typ.Kind == jsonoracle.String && isTensorType(typ.Literal) {
				out = append(out, leaf{statless: true})
			}
		case jsonoracle.Number, jsonoracle.NaN, jsonoracle.PosInf, jsonoracle.NegInf:
			x, ok := readNumber(n)
			l := leaf{nonTensor: true}
			if ok {
				l.holds = holdsOf(x)
			}
			out = append(out, l)
		}
	}
	walk(n)
	return out
}

// isTensorType tells a tensor type name ("torch.Tensor", "mindspore.Tensor",
// "numpy.ndarray", "...DTensor").
func isTensorType(t string) bool {
	return strings.Contains(strings.ToLower(t), "tensor") || strings.Contains(t, "ndarray")
}

// intValue reads an integer argument: a bare number or {"type": "int",
// "value": N}.
func intValue(n *jsonoracle.Node) (int, bool) {
	if n == nil {
		return 0, false
	}
	if n.Kind == jsonoracle.Object {
		n = member(n, "value")
	}
	if n == nil || n.Kind != jsonoracle.Number {
		return 0, false
	}
	x, err := strconv.ParseFloat(n.Literal, 64)
	if err != nil || x != math.Trunc(x) {
		return 0, false
	}
	return int(x), true
}
