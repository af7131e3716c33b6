package ahead

import (
	"math"
	"strconv"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// Key names one series: a statistic of one tensor slot of one call.
type Key struct {
	Op     string
	Tensor string // "input_args.0", "output.0", "parameters.weight", …
	Stat   string // "max" or "min"
}

// Value is one statistic at one step, with the limit it heads for.
type Value struct {
	Key
	Dtype       string
	Value       float64
	Limit       float64
	LimitReason string
	Linear      bool // an exp input: it climbs by additions
}

// Watched reports whether the value is close enough to its limit to start
// a warning (policy.AheadNear, policy.AheadExpNear).
func (v Value) Watched() bool {
	a := math.Abs(v.Value)
	if v.Linear {
		return v.Value >= v.Limit*policy.AheadExpNear && v.Value < v.Limit
	}
	return a >= v.Limit/policy.AheadNear && a < v.Limit
}

// Observe appends the values of an entry (read with details) that can head
// for a limit: Max and Min of its floating tensors, and the input Max of a
// forward call of the exp family. Only finite numbers of the tensors
// counts accepts count (policy.Matcher.AheadCounts).
func Observe(e *dump.Entry, counts func(*dump.Tensor) bool, out []Value) []Value {
	if lim, why, ok := policy.ExpLimit(e.Name, resultDtype(e)); ok {
		for i := range e.Tensors {
			t := &e.Tensors[i]
			if t.Field == dump.InputArgs && t.Arg == 0 {
				if finite(t.Max) && counts(t) {
					out = append(out, Value{Key: Key{e.Name, slotName(t), "max"}, Dtype: t.Dtype, Value: t.Max.Value, Limit: lim, LimitReason: why, Linear: true})
				}
				break
			}
		}
	}
	for i := range e.Tensors {
		t := &e.Tensors[i]
		m, ok := policy.DtypeMax(t.Dtype)
		if !ok || t.Field == dump.FieldOther || !counts(t) {
			continue
		}
		for _, s := range []struct {
			name string
			stat dump.Stat
		}{{"max", t.Max}, {"min", t.Min}} {
			if finite(s.stat) && math.Abs(s.stat.Value) < m {
				out = append(out, Value{Key: Key{e.Name, slotName(t), s.name}, Dtype: t.Dtype, Value: s.stat.Value, Limit: m, LimitReason: policy.DtypeLimitReason(t.Dtype)})
			}
		}
	}
	return out
}

func finite(s dump.Stat) bool {
	return s.Kind == dump.StatNumber && s.Class == 0 && !math.IsInf(s.Value, 0) && !math.IsNaN(s.Value)
}

// resultDtype is the dtype of the entry's first output tensor (its
// input's when it has none).
func resultDtype(e *dump.Entry) string {
	in := ""
	for i := range e.Tensors {
		switch t := &e.Tensors[i]; t.Field {
		case dump.Output:
			return t.Dtype
		case dump.InputArgs:
			if in == "" {
				in = t.Dtype
			}
		}
	}
	return in
}

// slotName is the tensor's place in its entry: "input_args.0",
// "output.0", "parameters.weight".
func slotName(t *dump.Tensor) string {
	if t.Slot != "" {
		return t.Field.String() + "." + t.Slot
	}
	if t.Key != "" {
		return t.Field.String() + "." + t.Key
	}
	return t.Field.String() + "." + strconv.Itoa(t.Arg)
}
