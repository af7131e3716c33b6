package repro

import (
	"math"
	"strconv"
	"strings"
)

// Python writes the value as a Python expression for repro.py. Tensors are
// their variable (TensorRef.Var), a torch.device is the device repro.py
// runs on, JSON arrays are tuples, and values msprobe did not record are
// None.
func (v Value) Python() string {
	var b strings.Builder
	v.writePython(&b)
	return b.String()
}

func (v Value) writePython(b *strings.Builder) {
	switch v.Kind {
	case KindBool:
		if v.Bool {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case KindInt:
		b.WriteString(v.Int)
	case KindFloat:
		b.WriteString(pyFloat(v.Float))
	case KindStr:
		b.WriteString(pyStr(v.Str))
	case KindSlice:
		b.WriteString("slice(")
		writeItems(b, v.Items)
		b.WriteString(")")
	case KindEllipsis:
		b.WriteString("...")
	case KindSize:
		b.WriteString("torch.Size([")
		writeItems(b, v.Items)
		b.WriteString("])")
	case KindDtype:
		if name, ok := strings.CutPrefix(v.Str, "torch."); ok && pyIdent(name) {
			b.WriteString("torch." + name)
		} else {
			b.WriteString("None")
		}
	case KindDevice:
		b.WriteString("torch.device(device)")
	case KindMemoryFormat:
		if pyIdent(v.Str) {
			b.WriteString("torch." + v.Str)
		} else {
			b.WriteString("None")
		}
	case KindReduceOp:
		if op := reduceOpName(v.Str); op != "" {
			b.WriteString("torch.distributed.ReduceOp." + op)
		} else {
			b.WriteString("None")
		}
	case KindList:
		b.WriteString("(")
		writeItems(b, v.Items)
		if len(v.Items) == 1 {
			b.WriteString(",")
		}
		b.WriteString(")")
	case KindDict:
		b.WriteString("{")
		for i, it := range v.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyStr(v.Keys[i]))
			b.WriteString(": ")
			it.writePython(b)
		}
		b.WriteString("}")
	case KindTensor:
		if v.Tensor != nil && v.Tensor.Var != "" {
			b.WriteString(v.Tensor.Var)
		} else {
			b.WriteString("None")
		}
	default: // None, process groups, P2POps, unrecorded values
		b.WriteString("None")
	}
}

func writeItems(b *strings.Builder, items []Value) {
	for i, it := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		it.writePython(b)
	}
}

// Note says what the Python expression leaves out, or "" when it is the
// value itself.
func (v Value) Note() string {
	switch v.Kind {
	case KindUnrecorded:
		if v.Type != "" {
			return "msprobe recorded no value for this " + v.Type + ": None stands in for it"
		}
		return "msprobe recorded {} (a positional torch.dtype or torch.device is not analysed): None stands in for it"
	case KindDevice:
		return "recorded device " + strconv.Quote(v.Str) + "; repro.py uses its --device"
	case KindGroup:
		return "a process group; None (the default group) stands in for it"
	case KindP2POp:
		return "a P2POp of batch_isend_irecv"
	case KindDtype:
		if name, ok := strings.CutPrefix(v.Str, "torch."); !ok || !pyIdent(name) {
			return "dtype " + strconv.Quote(v.Str) + " is not a torch dtype name: None stands in for it"
		}
	case KindMemoryFormat:
		if !pyIdent(v.Str) {
			return "memory format " + strconv.Quote(v.Str) + " is not a name: None stands in for it"
		}
	case KindReduceOp:
		if reduceOpName(v.Str) == "" {
			return "reduce op " + strconv.Quote(v.Str) + " does not name the operation: None stands in for it"
		}
	case KindList, KindDict:
		for _, it := range v.Items {
			if it.Note() != "" {
				return "holds values msprobe did not record in full"
			}
		}
	}
	return ""
}

// reduceOpName reads "RedOpType.SUM", "ReduceOp.SUM" or "SUM" (str(op)
// depends on the torch version); "" when the string names no operation
// (torch 1.13 writes the object's address).
func reduceOpName(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	switch s {
	case "SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM":
		return s
	}
	return ""
}

// pyStr writes a Python string literal: ASCII only, with escapes Python
// reads the same way Go writes them.
func pyStr(s string) string { return strconv.QuoteToASCII(s) }

// pyFloat writes a float as Python reads it back; NAN and INF are defined
// at the top of repro.py.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NAN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// pyKeywords are the names that cannot be identifiers.
var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

// pyIdent reports whether s is an ASCII Python identifier that is not a
// keyword.
func pyIdent(s string) bool {
	if s == "" || pyKeywords[s] {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// comment makes text safe for a one-line Python comment: anything but
// printable ASCII becomes '?'.
func comment(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	if len(b) > 200 {
		b = append(b[:197], "..."...)
	}
	return string(b)
}
