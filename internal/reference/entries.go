package reference

import (
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// value is one top-level slot of an entry with what it holds after the rule
// set.
type value struct {
	slot
	side         side
	holds        holds
	nonTensor    bool // every leaf is a non-tensor argument
	requiresGrad bool // some tensor of the slot requires grad
}

// entry is one dump.json entry of a rank's step.
type entry struct {
	index int
	name  string
	nameParts
	inputs, outputs []value
	// legitNegInf: a mask rule took -inf away here, or a non-tensor
	// argument is -inf (a legitimate -inf source).
	legitNegInf bool
	flagged     bool // nan_check: is_nan is 1
	recompute   bool // "is_recompute": true
	statless    bool // has tensors, none with Max or Min
	coll        *collCall
	phase       string
	afterB2     bool // after the last backward entry of the file
}

// slotsOf lists the top-level slots of one field of an entry.
func slotsOf(field string, n *jsonoracle.Node) []struct {
	slot
	node *jsonoracle.Node
} {
	type s = struct {
		slot
		node *jsonoracle.Node
	}
	var out []s
	switch {
	case n == nil:
	case n.Kind == jsonoracle.Array:
		for i, e := range n.Elems {
			out = append(out, s{slot{field: field, pos: i}, e})
		}
	case n.Kind == jsonoracle.Object:
		for _, m := range n.Members {
			out = append(out, s{slot{field: field, pos: -1, kw: m.Name}, m.Value})
		}
	default:
		out = append(out, s{slot{field: field, pos: 0}, n})
	}
	return out
}

// buildEntry reads one entry of rank self.
func buildEntry(index int, m jsonoracle.Member, self int) *entry {
	e := &entry{index: index, name: m.Name, nameParts: parseName(m.Name)}
	node := m.Value
	if f := member(node, "is_recompute"); f != nil && f.Kind == jsonoracle.Bool && f.Bool {
		e.recompute = true
	}
	if f := member(node, "is_nan"); f != nil {
		if (f.Kind == jsonoracle.Number && f.Literal == "1") || (f.Kind == jsonoracle.Bool && f.Bool) {
			e.flagged = true
		}
	}
	hasStats, hasStatless := false, false
	add := func(sd side, sl slot, n *jsonoracle.Node) {
		ls := leaves(n)
		v := value{slot: sl, side: sd, nonTensor: len(ls) > 0}
		var raw holds
		for _, l := range ls {
			raw |= l.holds
			if !l.nonTensor {
				v.nonTensor = false
			}
			if l.requiresGrad {
				v.requiresGrad = true
			}
			hasStats = hasStats || l.tensor
			hasStatless = hasStatless || l.statless
		}
		eff := applyRules(e.op, sd, sl, raw)
		v.holds = eff.kept
		if eff.maskNeg {
			e.legitNegInf = true
		}
		if sd == inputSide && v.nonTensor && v.holds.has(holdNegInf) {
			e.legitNegInf = true
		}
		if sd == inputSide {
			e.inputs = append(e.inputs, v)
		} else {
			e.outputs = append(e.outputs, v)
		}
	}
	if node != nil && node.Kind == jsonoracle.Object {
		paramsGrad := isParamsGrad(m.Name)
		for _, f := range node.Members {
			switch {
			case paramsGrad:
				// it records gradients that other calls made: inputs (README 1)
				add(inputSide, slot{field: f.Name, pos: -1, kw: f.Name}, f.Value)
			case f.Name == "input_args" || f.Name == "input_kwargs" || f.Name == "input" || f.Name == "parameters":
				for _, s := range slotsOf(f.Name, f.Value) {
					add(inputSide, s.slot, s.node)
				}
			case f.Name == "output":
				for _, s := range slotsOf(f.Name, f.Value) {
					add(outputSide, s.slot, s.node)
				}
			}
		}
	}
	e.statless = hasStatless && !hasStats
	if e.collective {
		e.coll = buildCollective(e.api, e.name, node, self)
	}
	return e
}

// isParamsGrad tells a Module….parameters_grad.N entry.
func isParamsGrad(name string) bool {
	segs := strings.Split(name, ".")
	n := len(segs)
	return n >= 3 && isModulePrefix(segs[0]) && segs[n-2] == "parameters_grad" && isDigits(segs[n-1])
}

// severe is what of a value is severe at its entry: NaN and +inf always;
// -inf in backward entries, in a module's parameters and after the last
// backward entry (README 5: by position and name, not by phase).
func (e *entry) severe(v value) holds {
	h := v.holds & (holdNaN | holdPosInf)
	if v.holds.has(holdNegInf) && (e.backward || e.afterB2 || v.field == "parameters") {
		h |= holdNegInf
	}
	return h
}

func (e *entry) severeIn() holds {
	var h holds
	for _, v := range e.inputs {
		h |= e.severe(v)
	}
	return h
}

func (e *entry) severeOut() holds {
	var h holds
	for _, v := range e.outputs {
		h |= e.severe(v)
	}
	return h
}

func (e *entry) anyIn() holds {
	var h holds
	for _, v := range e.inputs {
		h |= v.holds
	}
	return h
}

func (e *entry) anyOut() holds {
	var h holds
	for _, v := range e.outputs {
		h |= v.holds
	}
	return h
}

// sent and received are what a collective's send and receive slots held;
// in a collective every non-finite value is severe.
func (e *entry) sent() holds {
	var h holds
	if e.coll != nil {
		for _, s := range e.coll.sides {
			h |= s.send
		}
	}
	return h
}

func (e *entry) received() holds {
	var h holds
	if e.coll != nil {
		for _, s := range e.coll.sides {
			h |= s.recv
		}
	}
	return h
}
