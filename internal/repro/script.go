package repro

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"strings"
	"sync"
	"text/template"

	"github.com/nanhunt/nanhunt/verdict"
)

//go:embed repro.py.tmpl
var scriptText string

// scriptTmpl is parsed on first use, not at every nanhunt command's start.
var scriptTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("repro.py").Parse(scriptText))
})

// scriptData is what repro.py.tmpl is filled with. Every string that comes
// from dump.json is either a Python literal (written by pyStr) or a comment
// made safe by comment.
type scriptData struct {
	Entry      string // comment-safe
	EntryPy    string
	Forward    string // comment-safe; "" for a forward entry
	ForwardPy  string
	Call       string // comment-safe description of the call
	CallPy     string // the same, as a Python literal
	Step, Rank int
	DevicePy   string
	Backward   bool
	CannotRun  string // Python literal: why it cannot run; "" when it can
	NeedsNPU   bool   // the call is a torch_npu function
	Custom     bool
	CustomName string   // comment-safe
	CustomPy   string   // Python literal
	Hint       string   // comment-safe
	Notes      []string // Python literals
	Loads      []scriptLoad
	CallExpr   string
	Grads      []scriptGrad
	GradRows   []scriptRow
	Recorded   []scriptStat
	RecordedFw []scriptStat
}

type scriptLoad struct {
	Var, File, Where string // File is a Python literal, Where comment-safe
	Leaf             bool
}

type scriptGrad struct{ Slot, Var string } // Slot is a Python literal

type scriptRow struct{ Slot, What, Expr string } // Slot, What are Python literals

type scriptStat struct {
	Slot                 string // Python literal
	Max, Min, Mean, Norm string
	Holds, Shape, GradOf string // Python literals; GradOf "" for forward outputs
}

// script writes repro.py.
func (b *builder) script(device string) ([]byte, error) {
	c := b.c
	d := scriptData{
		Entry: comment(c.Entry), EntryPy: pyStr(c.Entry),
		Step: c.Step, Rank: c.Rank, DevicePy: pyStr(device),
		Backward: b.bwd != nil,
		Call:     comment(describeCall(c.Call)),
		CallPy:   pyStr(describeCall(c.Call)),
		NeedsNPU: c.Call.Module == "torch_npu",
	}
	if b.bwd != nil {
		d.Forward, d.ForwardPy = comment(c.Forward), pyStr(c.Forward)
	}
	switch c.Call.Kind {
	case CallDistributed:
		d.CannotRun = pyStr(c.Entry + " is a torch.distributed call: it needs the other ranks of the job, so it cannot be re-run alone")
	case CallCustom:
		d.Custom, d.CustomName, d.CustomPy, d.Hint = true, comment(c.Call.Func), pyStr(c.Call.Func), comment(c.Call.Hint)
	}
	for _, w := range c.Warnings {
		d.Notes = append(d.Notes, pyStr(w))
	}
	leaf := b.leaves()
	for i, t := range b.inputs {
		d.Loads = append(d.Loads, scriptLoad{Var: t.Var, File: pyStr(t.File), Where: comment(t.Position() + " of " + t.Entry), Leaf: leaf[i]})
	}
	for _, t := range b.grads {
		d.Loads = append(d.Loads, scriptLoad{Var: t.Var, File: pyStr(t.File), Where: comment("gradient of output." + t.Slot + " of " + b.fwd.Name)})
		d.Grads = append(d.Grads, scriptGrad{Slot: pyStr("output." + t.Slot), Var: t.Var})
	}
	if c.Runnable || c.Call.Kind == CallCustom {
		d.CallExpr = b.callExpr()
	}
	if b.bwd != nil {
		d.GradRows = b.gradRows()
		d.RecordedFw = statsOf(b.fwd.tensorsOf("output"), nil)
		d.Recorded = statsOf(b.bwd.tensorsOf("output"), b.gradOf())
	} else {
		d.Recorded = statsOf(b.fwd.tensorsOf("output"), nil)
	}
	var buf bytes.Buffer
	if err := scriptTmpl().Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("write %s: %w", ReproPy, err)
	}
	return buf.Bytes(), nil
}

// describeCall says in words what repro.py calls.
func describeCall(c Call) string {
	switch c.Kind {
	case CallFunction:
		return c.Func + "(...)"
	case CallMethod:
		return "<first argument>." + c.Method + "(...)"
	case CallDistributed:
		return c.Func + " (torch.distributed: not re-run alone)"
	}
	return "the function registered as " + c.Func + " (to be imported by hand)"
}

// callExpr writes the call with its arguments in place.
func (b *builder) callExpr() string {
	var pos, kw, odd []string
	recv := b.receiver()
	method := b.c.Call.Kind == CallMethod
	for i := range b.fwd.Args {
		a := &b.fwd.Args[i]
		expr := a.Value.Python()
		switch {
		case method && a == recv:
			continue
		case a.Index >= 0:
			pos = append(pos, expr)
		case pyIdent(a.Key):
			kw = append(kw, a.Key+"="+expr)
		default:
			odd = append(odd, pyStr(a.Key)+": "+expr)
		}
	}
	if len(odd) > 0 {
		kw = append(kw, "**{"+strings.Join(odd, ", ")+"}")
	}
	// A backward run of an in-place call writes into a copy of its first
	// argument: autograd refuses in-place writes into a leaf.
	clone := b.bwd != nil && b.c.Call.InPlace
	if method {
		r := recv.Value.Python()
		if !pyIdent(r) {
			r = "(" + r + ")"
		}
		if clone {
			r += ".clone()"
		}
		return r + "." + b.c.Call.Method + "(" + strings.Join(append(pos, kw...), ", ") + ")"
	}
	if clone && len(pos) > 0 {
		pos[0] += ".clone()"
	}
	fn := b.c.Call.Func
	if b.c.Call.Kind == CallCustom {
		fn = "API"
	}
	return fn + "(" + strings.Join(append(pos, kw...), ", ") + ")"
}

// gradSlots pairs the forward call's tensor inputs with the backward
// entry's output: slot i of "output" is the gradient of tensor input i.
// An element is the recorded gradient, nil for null (no gradient), and the
// list is shorter when msprobe recorded fewer gradients than inputs.
func (b *builder) gradSlots() []*Value {
	var leaves []*Value
	var walk func(v *Value)
	walk = func(v *Value) {
		if v.Kind == KindList {
			for i := range v.Items {
				walk(&v.Items[i])
			}
			return
		}
		leaves = append(leaves, v)
	}
	for i := range b.bwd.Output {
		walk(&b.bwd.Output[i])
	}
	return leaves
}

// leaves decides which forward inputs get requires_grad: those whose
// gradient msprobe recorded (or, past the recorded slots, that required
// grad in the run); all of them when that leaves none.
func (b *builder) leaves() []bool {
	out := make([]bool, len(b.inputs))
	if b.bwd == nil {
		return out
	}
	slots := b.gradSlots()
	any := false
	for i, t := range b.inputs {
		if i < len(slots) {
			out[i] = slots[i].Kind == KindTensor
		} else {
			out[i] = t.RequiresGrad
		}
		any = any || out[i]
	}
	if !any {
		for i := range out {
			out[i] = true
		}
	}
	return out
}

// gradOf maps a recorded gradient (its slot below "output") to the input
// it belongs to.
func (b *builder) gradOf() map[string]string {
	m := map[string]string{}
	for i, v := range b.gradSlots() {
		if v.Kind == KindTensor && i < len(b.inputs) {
			m[v.Tensor.Slot] = b.inputs[i].Position()
		}
	}
	return m
}

// gradRows are the gradients repro.py compares, with the recorded slot
// each goes with.
func (b *builder) gradRows() []scriptRow {
	slots := b.gradSlots()
	leaf := b.leaves()
	var rows []scriptRow
	for i, t := range b.inputs {
		if !leaf[i] {
			continue
		}
		slot, what := "("+t.Position()+")", "grad of "+t.Position()+", not recorded"
		if i < len(slots) && slots[i].Kind == KindTensor {
			slot, what = "output."+slots[i].Tensor.Slot, "grad of "+t.Position()
		}
		rows = append(rows, scriptRow{Slot: pyStr(slot), What: pyStr(what), Expr: t.Var + ".grad"})
	}
	for i := len(b.inputs); i < len(slots); i++ {
		if slots[i].Kind == KindTensor {
			rows = append(rows, scriptRow{Slot: pyStr("output." + slots[i].Tensor.Slot), What: pyStr("no forward input to compare with"), Expr: "None"})
		}
	}
	return rows
}

// statsOf writes the recorded statistics of output tensors.
func statsOf(ts []*TensorRef, gradOf map[string]string) []scriptStat {
	var out []scriptStat
	for _, t := range ts {
		s := scriptStat{
			Slot: pyStr(t.Position()),
			Max:  pyStat(t.Max, t.Dtype), Min: pyStat(t.Min, t.Dtype),
			Mean: pyStat(t.Mean, ""), Norm: pyStat(t.Norm, ""),
			Holds: pyStr(t.Holds()), Shape: pyShape(t.Shape), GradOf: "None",
		}
		if g, ok := gradOf[t.Slot]; ok {
			s.GradOf = pyStr(g)
		}
		out = append(out, s)
	}
	return out
}

func pyStat(n verdict.Number, dtype string) string {
	switch {
	case !n.Valid:
		return "None"
	case dtype == "torch.bool" && (n.Value == 0 || n.Value == 1):
		if n.Value == 1 {
			return "True"
		}
		return "False"
	case !math.IsInf(n.Value, 0) && !math.IsNaN(n.Value) && n.Value == math.Trunc(n.Value) && math.Abs(n.Value) < 1<<53 && isIntDtype(dtype):
		return fmt.Sprintf("%d", int64(n.Value))
	}
	return pyFloat(n.Value)
}

func isIntDtype(d string) bool {
	return strings.HasPrefix(d, "torch.int") || strings.HasPrefix(d, "torch.uint") || d == "torch.long" || d == "torch.short"
}

func pyShape(s []int) string {
	if s == nil {
		return "None"
	}
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
