package repro

import (
	"math"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// Kind is what a value of a recorded call was in Python.
type Kind string

// The kinds of Value. The names are those case.json writes as "type".
const (
	KindNone         Kind = "None"
	KindBool         Kind = "bool"
	KindInt          Kind = "int"
	KindFloat        Kind = "float"
	KindStr          Kind = "str"
	KindSlice        Kind = "slice"    // Items: start, stop, step
	KindEllipsis     Kind = "ellipsis" // ...
	KindSize         Kind = "torch.Size"
	KindDtype        Kind = "torch.dtype"         // Str: "torch.float16"
	KindDevice       Kind = "torch.device"        // Str: "cuda:0", "cpu:None", "0"
	KindMemoryFormat Kind = "torch.memory_format" // Str: "channels_last"
	KindReduceOp     Kind = "torch.distributed.ReduceOp"
	KindGroup        Kind = "torch.ProcessGroup"
	KindP2POp        Kind = "torch.distributed.P2POp"
	KindList         Kind = "list" // a JSON array: a Python list or tuple (msprobe does not tell them apart)
	KindDict         Kind = "dict" // an object: a dict, namedtuple or dataclass
	KindTensor       Kind = "tensor"
	// KindUnrecorded is a value msprobe did not record: {} for a positional
	// torch.dtype or torch.device, or a type it has no value for.
	KindUnrecorded Kind = "unrecorded"
)

// Value is a value of a recorded call decoded from dump.json: an argument,
// or a member of one.
type Value struct {
	Kind Kind
	// Type is the type name msprobe wrote when it says more than Kind: a
	// numpy scalar type ("float32"), a typed value whose value had another
	// kind, the type of an unrecorded value.
	Type  string
	Bool  bool
	Int   string  // KindInt: the literal (any size)
	Float float64 // KindFloat
	Str   string  // KindStr, KindDtype, KindDevice, KindMemoryFormat, KindReduceOp
	Items []Value // KindList, KindDict (parallel to Keys), KindSlice (3), KindSize
	Keys  []string
	// Tensor is set for KindTensor.
	Tensor *TensorRef
	// GroupRanks are a process group's ranks.
	GroupRanks []int
}

// decodeValue decodes a value as msprobe writes it (§2.5 of the format:
// {"type": ..., "value": ...} objects, arrays, null, tensors). It never
// fails: what it cannot read becomes KindUnrecorded or a plain value.
// Tensors are appended to *tensors, with slot paths below path.
func decodeValue(n *node, path string, tensors *[]*TensorRef) Value {
	switch n.Kind {
	case jsonlex.ArrayStart:
		v := Value{Kind: KindList, Items: make([]Value, 0, len(n.Elems))}
		for i, e := range n.Elems {
			v.Items = append(v.Items, decodeValue(e, joinSlot(path, strconv.Itoa(i)), tensors))
		}
		return v
	case jsonlex.ObjectStart:
		return decodeObject(n, path, tensors)
	}
	return plainValue(n)
}

func joinSlot(path, s string) string {
	if path == "" {
		return s
	}
	return path + "." + s
}

// tensorKeys are the members that make an object a tensor record.
var tensorKeys = map[string]bool{"Max": true, "Min": true, "Mean": true, "Norm": true, "dtype": true, "shape": true, "data_name": true}

func isTensorType(t string) bool {
	return strings.HasSuffix(t, "Tensor") || strings.HasSuffix(t, "ndarray")
}

func decodeObject(n *node, path string, tensors *[]*TensorRef) Value {
	if len(n.Members) == 0 {
		return Value{Kind: KindUnrecorded}
	}
	typ, hasType := "", false
	if t := n.get("type"); t != nil && t.Kind == jsonlex.String {
		typ, hasType = t.Text, true
	}
	if ct := n.get("class_type"); ct != nil && ct.Kind == jsonlex.String && strings.Contains(ct.Text, "P2POp") {
		return Value{Kind: KindP2POp, Type: ct.Text}
	}
	for _, m := range n.Members {
		if tensorKeys[m.Name] {
			return tensorValue(n, typ, path, tensors)
		}
	}
	if isTensorType(typ) {
		return tensorValue(n, typ, path, tensors)
	}
	if typ == "torch.ProcessGroup" || n.get("group_ranks") != nil || n.get("group_id") != nil || n.get("process_group_id") != nil {
		v := Value{Kind: KindGroup}
		if r := n.get("group_ranks"); r != nil {
			for _, e := range r.Elems {
				if e.Kind == jsonlex.Number {
					if k, err := strconv.Atoi(e.Text); err == nil {
						v.GroupRanks = append(v.GroupRanks, k)
					}
				}
			}
		}
		return v
	}
	if hasType {
		if val := n.get("value"); val != nil {
			return typedValue(typ, val)
		}
		if typ == "torch.memory_format" {
			if f := n.get("format"); f != nil && f.Kind == jsonlex.String {
				return Value{Kind: KindMemoryFormat, Str: strings.TrimPrefix(f.Text, "torch.")}
			}
		}
		if typ == "ellipsis" {
			return Value{Kind: KindEllipsis}
		}
		return Value{Kind: KindUnrecorded, Type: typ}
	}
	v := Value{Kind: KindDict}
	for _, m := range n.Members {
		v.Keys = append(v.Keys, m.Name)
		v.Items = append(v.Items, decodeValue(m.Value, joinSlot(path, m.Name), tensors))
	}
	return v
}

// typedValue decodes {"type": typ, "value": val}.
func typedValue(typ string, val *node) Value {
	plain := plainValue(val)
	switch typ {
	case "int":
		if plain.Kind == KindInt {
			return plain
		}
	case "float":
		switch plain.Kind {
		case KindFloat:
			return plain
		case KindInt:
			return Value{Kind: KindFloat, Float: parseFloat(val.Text)}
		case KindStr:
			if f, ok := nonFiniteString(plain.Str); ok {
				return Value{Kind: KindFloat, Float: f}
			}
		}
	case "bool":
		if plain.Kind == KindBool {
			return plain
		}
	case "str":
		if plain.Kind == KindStr {
			return plain
		}
	case "slice":
		if val.Kind == jsonlex.ArrayStart && len(val.Elems) == 3 {
			v := Value{Kind: KindSlice}
			for _, e := range val.Elems {
				v.Items = append(v.Items, plainValue(e))
			}
			return v
		}
	case "ellipsis":
		return Value{Kind: KindEllipsis}
	case "torch.Size":
		if val.Kind == jsonlex.ArrayStart {
			v := Value{Kind: KindSize, Items: []Value{}}
			for _, e := range val.Elems {
				v.Items = append(v.Items, plainValue(e))
			}
			return v
		}
	case "torch.dtype":
		if plain.Kind == KindStr {
			return Value{Kind: KindDtype, Str: plain.Str}
		}
		return Value{Kind: KindUnrecorded, Type: typ}
	case "torch.device":
		switch plain.Kind {
		case KindStr:
			return Value{Kind: KindDevice, Str: plain.Str}
		case KindInt:
			return Value{Kind: KindDevice, Str: plain.Int}
		}
		return Value{Kind: KindUnrecorded, Type: typ}
	case "torch.distributed.ReduceOp":
		if plain.Kind == KindStr {
			return Value{Kind: KindReduceOp, Str: plain.Str}
		}
		return Value{Kind: KindUnrecorded, Type: typ}
	case "torch.memory_format":
		if plain.Kind == KindStr {
			return Value{Kind: KindMemoryFormat, Str: strings.TrimPrefix(plain.Str, "torch.")}
		}
		return Value{Kind: KindUnrecorded, Type: typ}
	}
	// A numpy scalar ("float32", "int64", "bool_"), or a value of another
	// kind than its type says: keep the value, note the type.
	if plain.Kind == KindFloat || plain.Kind == KindInt || plain.Kind == KindBool || plain.Kind == KindStr || plain.Kind == KindNone {
		plain.Type = typ
		return plain
	}
	return Value{Kind: KindUnrecorded, Type: typ}
}

// plainValue decodes JSON as Python's json module would, without msprobe's
// typed objects: null, bools, numbers, strings, arrays and objects.
func plainValue(n *node) Value {
	switch n.Kind {
	case jsonlex.Null:
		return Value{Kind: KindNone}
	case jsonlex.True:
		return Value{Kind: KindBool, Bool: true}
	case jsonlex.False:
		return Value{Kind: KindBool}
	case jsonlex.NaN:
		return Value{Kind: KindFloat, Float: math.NaN()}
	case jsonlex.PosInf:
		return Value{Kind: KindFloat, Float: math.Inf(1)}
	case jsonlex.NegInf:
		return Value{Kind: KindFloat, Float: math.Inf(-1)}
	case jsonlex.String:
		return Value{Kind: KindStr, Str: n.Text}
	case jsonlex.Number:
		if isIntLiteral(n.Text) {
			return Value{Kind: KindInt, Int: n.Text}
		}
		return Value{Kind: KindFloat, Float: parseFloat(n.Text)}
	case jsonlex.ArrayStart:
		v := Value{Kind: KindList, Items: make([]Value, 0, len(n.Elems))}
		for _, e := range n.Elems {
			v.Items = append(v.Items, plainValue(e))
		}
		return v
	case jsonlex.ObjectStart:
		v := Value{Kind: KindDict}
		for _, m := range n.Members {
			v.Keys = append(v.Keys, m.Name)
			v.Items = append(v.Items, plainValue(m.Value))
		}
		return v
	}
	return Value{Kind: KindUnrecorded}
}

// isIntLiteral reports whether a JSON number literal has no fraction and no
// exponent.
func isIntLiteral(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".eE")
}

// parseFloat reads a JSON number; a literal beyond float64 is ±Inf, as
// Python reads it.
func parseFloat(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN() // not reached for literals the lexer accepted
	}
	return f
}

// nonFiniteString reads the string spellings older dumps use for
// non-finite floats.
func nonFiniteString(s string) (float64, bool) {
	switch strings.ToLower(s) {
	case "nan", "-nan", "+nan":
		return math.NaN(), true
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	}
	return 0, false
}
