package repro

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/nanhunt/nanhunt/verdict"
)

// CaseSchema names the form of case.json. Fields may be added; none will be
// removed or change meaning without a new schema name.
const CaseSchema = "nanhunt/repro-case/v1"

// caseFile is case.json.
type caseFile struct {
	Schema         string       `json:"schema"`
	Entry          string       `json:"entry"`
	API            string       `json:"api"`
	Direction      string       `json:"direction"`
	Forward        string       `json:"forward_entry,omitempty"`
	Step           int          `json:"step"`
	Rank           int          `json:"rank"`
	Dump           string       `json:"dump"`
	FromVerdict    bool         `json:"from_verdict"`
	Call           Call         `json:"call"`
	Runnable       bool         `json:"runnable"`
	Device         string       `json:"device"`
	Tensors        []caseTensor `json:"tensors"`
	Arguments      []caseArg    `json:"arguments"`
	Outputs        []caseStat   `json:"outputs"`
	ForwardOutputs []caseStat   `json:"forward_outputs,omitempty"`
	Warnings       []string     `json:"warnings"`
}

// caseTensor is a tensor file repro.py loads.
type caseTensor struct {
	File         string `json:"file"`
	Entry        string `json:"entry"`
	Slot         string `json:"slot"` // "input_args.0", "input.0"
	Var          string `json:"var"`  // its variable in repro.py
	Dtype        string `json:"dtype"`
	Shape        []int  `json:"shape"`
	RequiresGrad bool   `json:"requires_grad"` // as recorded
	// Grad: repro.py computes the tensor's gradient (a backward case's
	// forward input whose gradient msprobe recorded).
	Grad bool `json:"grad,omitempty"`
}

// caseArg is a non-tensor argument.
type caseArg struct {
	Slot   string `json:"slot"` // "input_args.1", "input_kwargs.dim"
	Field  string `json:"field"`
	Index  *int   `json:"index,omitempty"`
	Key    string `json:"key,omitempty"`
	Value  Value  `json:"value"`
	Python string `json:"python"`
	Note   string `json:"note,omitempty"`
}

// caseStat is the recorded statistics of one output slot.
type caseStat struct {
	Slot   string         `json:"slot"` // "output.0"
	GradOf string         `json:"grad_of,omitempty"`
	Dtype  string         `json:"dtype"`
	Shape  []int          `json:"shape"`
	Max    verdict.Number `json:"max"`
	Min    verdict.Number `json:"min"`
	Mean   verdict.Number `json:"mean"`
	Norm   verdict.Number `json:"norm"`
	Holds  string         `json:"holds"`
}

// caseJSON writes case.json.
func (b *builder) caseJSON(device string) ([]byte, error) {
	c := b.c
	f := caseFile{
		Schema: CaseSchema, Entry: c.Entry, API: c.API, Direction: c.Direction, Forward: c.Forward,
		Step: c.Step, Rank: c.Rank, Dump: c.Dump, FromVerdict: c.FromVerdict, Call: c.Call, Runnable: c.Runnable,
		Device: device, Tensors: []caseTensor{}, Arguments: []caseArg{}, Warnings: append([]string{}, c.Warnings...),
	}
	leaf := b.leaves()
	for i, t := range append(append([]*TensorRef(nil), b.inputs...), b.grads...) {
		f.Tensors = append(f.Tensors, caseTensor{File: t.File, Entry: t.Entry, Slot: t.Position(), Var: t.Var,
			Dtype: t.Dtype, Shape: t.Shape, RequiresGrad: t.RequiresGrad, Grad: i < len(leaf) && leaf[i]})
	}
	for _, a := range c.Arguments {
		ca := caseArg{Slot: a.Position(), Field: a.Field, Key: a.Key, Value: a.Value, Python: a.Value.Python(), Note: a.Value.Note()}
		if a.Index >= 0 {
			i := a.Index
			ca.Index = &i
		}
		f.Arguments = append(f.Arguments, ca)
	}
	if b.bwd != nil {
		f.Outputs = caseStats(b.bwd.tensorsOf("output"), b.gradOf())
		f.ForwardOutputs = caseStats(b.fwd.tensorsOf("output"), nil)
	} else {
		f.Outputs = caseStats(b.fwd.tensorsOf("output"), nil)
	}
	out, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", CaseJSON, err)
	}
	return append(out, '\n'), nil
}

func caseStats(ts []*TensorRef, gradOf map[string]string) []caseStat {
	out := []caseStat{}
	for _, t := range ts {
		out = append(out, caseStat{Slot: t.Position(), GradOf: gradOf[t.Slot], Dtype: t.Dtype, Shape: t.Shape,
			Max: t.Max, Min: t.Min, Mean: t.Mean, Norm: t.Norm, Holds: t.Holds()})
	}
	return out
}

// MarshalJSON writes the value as case.json does: {"type": kind, "value":
// ...}, with non-finite floats as "nan", "inf", "-inf", tensors as their
// file, lists and slices as arrays of values, dicts as objects of values.
func (v Value) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	v.writeJSON(&b)
	return b.Bytes(), nil
}

func (v Value) writeJSON(b *bytes.Buffer) {
	b.WriteString(`{"type":`)
	writeJSONString(b, string(v.Kind))
	if v.Type != "" && v.Type != string(v.Kind) {
		b.WriteString(`,"msprobe_type":`)
		writeJSONString(b, v.Type)
	}
	switch v.Kind {
	case KindBool:
		b.WriteString(`,"value":` + strconv.FormatBool(v.Bool))
	case KindInt:
		b.WriteString(`,"value":` + v.Int)
	case KindFloat:
		b.WriteString(`,"value":`)
		switch {
		case math.IsNaN(v.Float):
			b.WriteString(`"nan"`)
		case math.IsInf(v.Float, 1):
			b.WriteString(`"inf"`)
		case math.IsInf(v.Float, -1):
			b.WriteString(`"-inf"`)
		default:
			b.WriteString(strconv.FormatFloat(v.Float, 'g', -1, 64))
		}
	case KindStr, KindDtype, KindDevice, KindMemoryFormat, KindReduceOp:
		b.WriteString(`,"value":`)
		writeJSONString(b, v.Str)
	case KindSlice, KindSize, KindList:
		b.WriteString(`,"value":[`)
		for i, it := range v.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.writeJSON(b)
		}
		b.WriteByte(']')
	case KindDict:
		b.WriteString(`,"value":{`)
		for i, it := range v.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, v.Keys[i])
			b.WriteByte(':')
			it.writeJSON(b)
		}
		b.WriteByte('}')
	case KindTensor:
		if t := v.Tensor; t != nil {
			b.WriteString(`,"file":`)
			writeJSONString(b, t.File)
			b.WriteString(`,"dtype":`)
			writeJSONString(b, t.Dtype)
		}
	case KindGroup:
		b.WriteString(`,"ranks":[`)
		for i, r := range v.GroupRanks {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(r))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
}

func writeJSONString(b *bytes.Buffer, s string) {
	out, _ := json.Marshal(s) // a string always marshals
	b.Write(out)
}
