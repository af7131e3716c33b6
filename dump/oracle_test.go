package dump

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// This file restates what the Reader extracts, over a tree decoded by an
// independent strict decoder, so that the two can be compared on any input.

type oTensor struct {
	Field                         Field
	Arg                           int
	Key, Slot                     string
	Class                         Class
	Empty, Checksum, RequiresGrad bool
	Type, Dtype, DataName         string
	Shape                         string
}

type oArg struct {
	Field Field
	Arg   int
	Key   string
	Class Class
}

type oEntry struct {
	Name      string
	IsNaN     int8
	HasOutput bool
	Tensors   []oTensor
	Args      []oArg // only non-finite numbers
}

// fromReader reduces the Reader's entries to the oracle's shape.
func fromReader(e *Entry, details bool) oEntry {
	o := oEntry{Name: e.Name, IsNaN: e.IsNaN, HasOutput: e.HasOutput}
	for _, t := range e.Tensors {
		ot := oTensor{Field: t.Field, Arg: t.Arg, Key: t.Key, Class: holds(&t), Empty: t.Empty, Checksum: t.Checksum, RequiresGrad: t.RequiresGrad}
		if details {
			ot.Slot, ot.Type, ot.Dtype, ot.DataName, ot.Shape = t.Slot, t.Type, t.Dtype, t.DataName, fmt.Sprint(t.Shape)
		}
		o.Tensors = append(o.Tensors, ot)
	}
	for _, a := range e.Args {
		if a.Num.Class != 0 {
			o.Args = append(o.Args, oArg{a.Field, a.Arg, a.Key, a.Num.Class})
		}
	}
	return o
}

// oracleFields are the fields of an entry, by member name.
var oracleFields = map[string]Field{
	"input_args": InputArgs, "input_kwargs": InputKwargs, "input": Input, "output": Output, "parameters": Parameters,
}

type oracle struct {
	details bool
	entries []oEntry
	cur     *oEntry
	path    []string
}

// oracleEntries extracts entries from a decoded document; ok is false when
// the Reader must report an error for it.
func oracleEntries(root *jsonoracle.Node, details bool) (entries []oEntry, ok bool) {
	if root.Kind != jsonoracle.Object {
		return nil, false
	}
	o := &oracle{details: details}
	read := false
	for _, m := range root.Members {
		if m.Name != "data" {
			continue
		}
		if read {
			return o.entries, false // a second "data" after the first is damage
		}
		switch m.Value.Kind {
		case jsonoracle.Null:
			continue
		case jsonoracle.Object:
		default:
			return o.entries, false
		}
		for _, em := range m.Value.Members {
			o.entry(em.Name, em.Value)
		}
		read = true
	}
	return o.entries, true
}

func (o *oracle) entry(name string, v *jsonoracle.Node) {
	o.entries = append(o.entries, oEntry{Name: name, IsNaN: -1})
	o.cur = &o.entries[len(o.entries)-1]
	if v.Kind != jsonoracle.Object {
		return
	}
	pg := strings.Contains(name, ".parameters_grad.")
	for i, m := range v.Members {
		switch {
		case m.Name == "is_nan":
			switch m.Value.Kind {
			case jsonoracle.Number:
				f, _ := strconv.ParseFloat(m.Value.Literal, 64)
				o.cur.IsNaN = 1
				if f == 0 {
					o.cur.IsNaN = 0
				}
			case jsonoracle.Bool:
				o.cur.IsNaN = 0
				if m.Value.Bool {
					o.cur.IsNaN = 1
				}
			}
			continue
		case m.Name == "is_recompute":
			continue
		}
		o.path = o.path[:0]
		var loc slotLoc
		if pg {
			loc = slotLoc{field: ParamGrads, arg: i, key: m.Name, top: true}
			o.push(m.Name)
		} else {
			f, ok := oracleFields[m.Name]
			if !ok {
				f = FieldOther
			}
			loc = slotLoc{field: f, fieldLevel: true}
		}
		if loc.field == Output {
			o.cur.HasOutput = true
		}
		o.value(m.Value, loc)
	}
}

func (o *oracle) push(s string) {
	if o.details {
		o.path = append(o.path, s)
	}
}

func (o *oracle) pop() {
	if o.details {
		o.path = o.path[:len(o.path)-1]
	}
}

func (o *oracle) value(v *jsonoracle.Node, loc slotLoc) {
	switch v.Kind {
	case jsonoracle.Array:
		for i, e := range v.Elems {
			o.push(strconv.Itoa(i))
			o.value(e, loc.child(i, ""))
			o.pop()
		}
	case jsonoracle.Object:
		if loc.fieldLevel {
			for i, m := range v.Members {
				child := loc.child(i, m.Name)
				if pos, ok := oIndex(m.Name); ok && (loc.field == InputArgs || loc.field == Input || loc.field == Output) {
					child = loc.child(pos, "") // a list written as an object keyed by position
				}
				o.push(m.Name)
				o.value(m.Value, child)
				o.pop()
			}
			return
		}
		o.object(v, loc)
	case jsonoracle.Number, jsonoracle.NaN, jsonoracle.PosInf, jsonoracle.NegInf:
		if c := oClass(v); c != 0 {
			o.cur.Args = append(o.cur.Args, oArg{loc.field, loc.arg, loc.key, c})
		}
	}
}

// oIndex reads a member name that is a position: decimal digits only, at
// most nine.
func oIndex(name string) (int, bool) {
	if name == "" || len(name) > 9 || strings.Trim(name, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(name)
	return n, err == nil
}

func (o *oracle) object(v *jsonoracle.Node, loc slotLoc) {
	var typ, classType, dtype, dataName string
	var tensorKeys, empty, checksum, rg, hasGroup, hasValue bool
	var maxCls, minCls, valueCls Class
	var shape []int
	firstArg, firstTensor := len(o.cur.Args), len(o.cur.Tensors)
	hasType, hasStat := false, false
	str := func(n *jsonoracle.Node) string {
		if n.Kind == jsonoracle.String {
			if len(n.Literal) > 4096 {
				return n.Literal[:4096]
			}
			return n.Literal
		}
		return ""
	}
	for i, m := range v.Members {
		switch strings.ToLower(m.Name) {
		case "max":
			tensorKeys, hasStat = true, true
			maxCls = oStat(m.Value) // the last one written wins
			continue
		case "min":
			tensorKeys, hasStat = true, true
			minCls = oStat(m.Value)
			continue
		case "mean", "norm":
			tensorKeys = true
			continue
		}
		switch m.Name {
		case "type":
			typ, hasType = str(m.Value), true
			continue
		case "dtype":
			tensorKeys = true
			if o.details {
				dtype = str(m.Value)
				continue
			}
		case "shape":
			tensorKeys = true
			shape = shape[:0]
			if m.Value.Kind == jsonoracle.Array {
				for _, d := range m.Value.Elems {
					if d.Kind == jsonoracle.Number {
						if d.Literal == "0" {
							empty = true
						}
						n, _ := strconv.Atoi(d.Literal)
						shape = append(shape, n)
					}
				}
			}
			continue
		case "requires_grad":
			rg = m.Value.Kind == jsonoracle.Bool && m.Value.Bool
			continue
		case "data_name":
			tensorKeys = true
			if o.details {
				dataName = str(m.Value)
				continue
			}
		case "md5":
			checksum = true
		case "value":
			hasValue = true
			switch m.Value.Kind {
			case jsonoracle.String:
				valueCls = oStat(m.Value)
			case jsonoracle.Number, jsonoracle.NaN, jsonoracle.PosInf, jsonoracle.NegInf:
				valueCls = oClass(m.Value)
			}
			// without a type (so far) it is a member like any other, walked
			// below; a "type" after it drops what it held
		case "group_ranks", "group_id", "process_group_id":
			hasGroup = true
			continue
		case "class_type":
			classType = str(m.Value)
			continue
		case "op":
			if classType != "" {
				continue
			}
		case "tag":
			if classType != "" {
				continue
			}
		case "peer":
			continue
		}
		if tensorKeys || hasType || isTensorType(typ) {
			continue
		}
		o.push(m.Name)
		o.value(m.Value, loc.child(i, m.Name))
		o.pop()
	}
	if hasType || hasStat {
		// a tensor or a typed object: what its other members hold is not a value of the call
		o.cur.Args, o.cur.Tensors = slices.Clip(o.cur.Args[:firstArg]), slices.Clip(o.cur.Tensors[:firstTensor])
		if len(o.cur.Args) == 0 {
			o.cur.Args = nil
		}
		if len(o.cur.Tensors) == 0 {
			o.cur.Tensors = nil
		}
	}
	slot := strings.Join(o.path, ".")
	switch {
	case strings.Contains(classType, "P2POp"):
	case tensorKeys || isTensorType(typ):
		t := oTensor{Field: loc.field, Arg: loc.arg, Key: loc.key, Class: maxCls | minCls, Empty: empty, Checksum: checksum, RequiresGrad: rg}
		if o.details {
			if shape == nil {
				shape = []int{}
			}
			t.Slot, t.Type, t.Dtype, t.DataName, t.Shape = slot, typ, dtype, dataName, fmt.Sprint(shape)
		}
		o.cur.Tensors = append(o.cur.Tensors, t)
	case hasGroup || typ == "torch.ProcessGroup":
	case hasType && typ != "str" && hasValue && valueCls != 0: // README rule 4: any "type", "" included
		o.cur.Args = append(o.cur.Args, oArg{loc.field, loc.arg, loc.key, valueCls})
	}
}

// numberLiteral is JSON's number grammar, leading zeros allowed.
var numberLiteral = regexp.MustCompile(`^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// oClass is the non-finite class of a number node.
func oClass(n *jsonoracle.Node) Class {
	switch n.Kind {
	case jsonoracle.NaN:
		return NaN
	case jsonoracle.PosInf:
		return PosInf
	case jsonoracle.NegInf:
		return NegInf
	case jsonoracle.Number:
		if len(n.Literal) > maxNumberLen {
			return 0
		}
		f, _ := strconv.ParseFloat(n.Literal, 64)
		switch {
		case math.IsInf(f, 1):
			return PosInf
		case math.IsInf(f, -1):
			return NegInf
		}
	}
	return 0
}

// oStat is the class of a Max/Min statistic: numbers, numbers written as
// strings, and the string spellings "nan", "inf", "-inf", "Infinity" ... in
// any case.
func oStat(n *jsonoracle.Node) Class {
	if n.Kind != jsonoracle.String {
		return oClass(n)
	}
	if lit := strings.TrimPrefix(n.Literal, "+"); numberLiteral.MatchString(lit) {
		return oClass(&jsonoracle.Node{Kind: jsonoracle.Number, Literal: lit})
	}
	switch strings.ToLower(n.Literal) {
	case "nan", "-nan", "+nan":
		return NaN
	case "inf", "+inf", "infinity", "+infinity":
		return PosInf
	case "-inf", "-infinity":
		return NegInf
	}
	return 0
}
