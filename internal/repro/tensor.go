package repro

import (
	"math"
	"strconv"

	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/jsonlex"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
)

// TensorRef is a tensor's record in dump.json.
type TensorRef struct {
	Entry string // the entry it belongs to
	Field string // input_args, input_kwargs, input, output
	Slot  string // path below the field: "0", "0.1", "dim"

	Type         string
	Dtype        string
	Shape        []int
	RequiresGrad bool
	// Max, Min, Mean and Norm as recorded; not Valid when absent or null.
	// A bool tensor's Max (any) and Min (all) are 1 or 0.
	Max, Min, Mean, Norm verdict.Number
	// DataName is the file msprobe saved the tensor to (data_name).
	DataName string
	// Source is where the file was found; File its name in the case folder.
	Source, File string
	// rel is Source relative to the dump folder it is copied from.
	rel string
	// Var is the tensor's Python variable in repro.py.
	Var string
}

// Position is the tensor's place in its entry: "input_args.0", "output.1".
func (t *TensorRef) Position() string { return t.Field + "." + t.Slot }

// Holds is what the recorded Max and Min say the tensor holds: "finite",
// "nan", "+inf", "nan,-inf", or "unknown" without them.
func (t *TensorRef) Holds() string {
	if !t.Max.Valid && !t.Min.Valid {
		return "unknown"
	}
	return (classOf(t.Max) | classOf(t.Min)).String()
}

func classOf(n verdict.Number) dump.Class {
	switch {
	case !n.Valid:
		return 0
	case math.IsNaN(n.Value):
		return nonfinite.NaN
	case math.IsInf(n.Value, 1):
		return nonfinite.PosInf
	case math.IsInf(n.Value, -1):
		return nonfinite.NegInf
	}
	return 0
}

// tensorValue reads a tensor record.
func tensorValue(n *node, typ, path string, tensors *[]*TensorRef) Value {
	t := &TensorRef{Slot: path, Type: typ}
	for _, m := range n.Members {
		v := m.Value
		switch m.Name {
		case "dtype":
			if v.Kind == jsonlex.String {
				t.Dtype = v.Text
			}
		case "shape":
			t.Shape = []int{}
			for _, e := range v.Elems {
				if e.Kind == jsonlex.Number {
					if k, err := strconv.Atoi(e.Text); err == nil {
						t.Shape = append(t.Shape, k)
					}
				}
			}
		case "Max":
			t.Max = statOf(v)
		case "Min":
			t.Min = statOf(v)
		case "Mean":
			t.Mean = statOf(v)
		case "Norm":
			t.Norm = statOf(v)
		case "requires_grad":
			t.RequiresGrad = v.Kind == jsonlex.True
		case "data_name":
			if v.Kind == jsonlex.String {
				t.DataName = v.Text
			}
		}
	}
	if tensors != nil {
		*tensors = append(*tensors, t)
	}
	return Value{Kind: KindTensor, Type: typ, Tensor: t}
}

// statOf reads a statistic: a number, a bare NaN/Infinity, a string
// spelling of one, or a bool (bool tensors).
func statOf(n *node) verdict.Number {
	switch n.Kind {
	case jsonlex.Number:
		return verdict.Number{Value: parseFloat(n.Text), Valid: true}
	case jsonlex.NaN:
		return verdict.Number{Value: math.NaN(), Valid: true}
	case jsonlex.PosInf:
		return verdict.Number{Value: math.Inf(1), Valid: true}
	case jsonlex.NegInf:
		return verdict.Number{Value: math.Inf(-1), Valid: true}
	case jsonlex.True:
		return verdict.Number{Value: 1, Valid: true}
	case jsonlex.False:
		return verdict.Number{Value: 0, Valid: true}
	case jsonlex.String:
		if f, ok := nonFiniteString(n.Text); ok {
			return verdict.Number{Value: f, Valid: true}
		}
	}
	return verdict.Number{}
}
