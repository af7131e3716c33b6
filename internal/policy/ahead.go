package policy

import (
	"fmt"
	"math"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"
)

// The rule for a statistic heading for overflow (README "Heading for
// overflow"). A series is one statistic (Max or Min) of one tensor slot of
// one call on one rank, at each dumped step; it is judged at its last step
// S, from its values at the last three dumped steps up to S.
const (
	// AheadNear: a value is watched from within this factor of its limit
	// (an exp input from AheadExpNear of it).
	AheadNear    = 64.0
	AheadExpNear = 0.5
	// AheadRise: each of the last two steps rises at least this factor per
	// step (an exp input by AheadExpRise of its limit per step).
	AheadRise    = 1.05
	AheadExpRise = 0.01
	// AheadHorizon: a series that reaches its limit within this many steps
	// at its pace warns; so does one within AheadClose of its limit (an
	// exp input within AheadExpClose of it) at any pace.
	AheadHorizon  = 5.0
	AheadClose    = 4.0
	AheadExpClose = 0.75
	// AheadPoints is how many dumped steps the rule reads; AheadShown how
	// many a warning shows.
	AheadPoints = 3
	AheadShown  = 5
)

// DtypeMax is the largest finite value of a floating dtype ("torch.float16",
// "torch.bfloat16", …); false for integer, bool and unknown dtypes, which
// never overflow to a non-finite value.
func DtypeMax(dtype string) (float64, bool) {
	switch strings.TrimPrefix(dtype, "torch.") {
	case "float16", "half":
		return 65504, true
	case "bfloat16":
		return 3.3895313892515355e38, true
	case "float32", "float":
		return math.MaxFloat32, true
	case "float64", "double":
		return math.MaxFloat64, true
	}
	return 0, false
}

// dtypeShort is "float16" for "torch.float16".
func dtypeShort(dtype string) string { return strings.TrimPrefix(dtype, "torch.") }

// expFamily maps the API of a call whose result grows as exp of its input
// to the input value past which the result overflows, given the largest
// finite value of the result's dtype.
var expFamily = map[string]func(max float64) (float64, string){
	"exp":   func(m float64) (float64, string) { return math.Log(m), "ln" },
	"exp_":  func(m float64) (float64, string) { return math.Log(m), "ln" },
	"expm1": func(m float64) (float64, string) { return math.Log(m), "ln" },
	"exp2":  func(m float64) (float64, string) { return math.Log2(m), "log2" },
	"sinh":  func(m float64) (float64, string) { return math.Log(2 * m), "ln 2·" },
	"cosh":  func(m float64) (float64, string) { return math.Log(2 * m), "ln 2·" },
}

// ExpLimit is, for a forward call of the exp family (exp, expm1, exp2,
// sinh, cosh), the input value past which its result overflows the dtype
// it is stored in, and why; false for any other call.
func ExpLimit(op, resultDtype string) (limit float64, reason string, ok bool) {
	limit, fn, api, ok := expLimit(op, resultDtype)
	if !ok {
		return 0, "", false
	}
	m, _ := DtypeMax(resultDtype)
	return limit, fmt.Sprintf("%s stores its result in %s, which overflows past %s(%s) = %.4g", api, dtypeShort(resultDtype), fn, formatLimit(m), limit), true
}

// ExpLimitValue is ExpLimit's limit alone, without the words.
func ExpLimitValue(op, resultDtype string) (float64, bool) {
	limit, _, _, ok := expLimit(op, resultDtype)
	return limit, ok
}

func expLimit(op, resultDtype string) (limit float64, fn, api string, ok bool) {
	n := dump.ParseName(op)
	if n.Module || n.Dir != notation.Forward {
		return 0, "", "", false
	}
	f, ok := expFamily[strings.TrimPrefix(n.API, "special_")]
	m, known := DtypeMax(resultDtype)
	if !ok || !known {
		return 0, "", "", false
	}
	limit, fn = f(m)
	return limit, fn, n.API, true
}

// DtypeLimitReason says why a dtype's maximum is a limit.
func DtypeLimitReason(dtype string) string {
	m, _ := DtypeMax(dtype)
	return dtypeShort(dtype) + " holds at most " + formatLimit(m)
}

func formatLimit(m float64) string {
	if m == 65504 {
		return "65504"
	}
	return fmt.Sprintf("%.4g", m)
}

// AheadWatched reports whether a value of a tensor of the dtype is close
// enough to the dtype's limit to be watched: within AheadNear of it, and
// not the dtype's maximum itself (a fill written on purpose, such as the
// float16 maximum used as a mask value).
func AheadWatched(dtype string, value float64) bool {
	m, ok := DtypeMax(dtype)
	a := math.Abs(value)
	return ok && a >= m/AheadNear && a < m
}

// AheadSearch is what the byte search looks for to find the watched values
// without parsing: number literals with at least IntDigits digits before
// the decimal point, or an exponent of at least Exponent (the smallest
// watched float16 value, 65504/64, has four; the smallest watched bfloat16
// and float32 ones are past 1e36), and the names of the exp family.
type AheadSearch struct {
	IntDigits int
	Exponent  int
	ExpAPIs   []string
}

// AheadSearchRules is the byte search's part of the rule.
func AheadSearchRules() AheadSearch {
	s := AheadSearch{IntDigits: 4, Exponent: 36}
	for api := range expFamily {
		s.ExpAPIs = append(s.ExpAPIs, api)
	}
	return s
}

// AheadCounts returns the test of which tensors of an entry carry values
// of the call's own that the rule set judges: not a slot a rule takes
// every value of (uninitialised memory, a buffer the op overwrites), and
// for a collective only its send slots on the input side (none for one
// that sends from its root only, whose input elsewhere is a receive
// buffer) and its receive slots on the output side; nothing of a batch of
// point-to-point calls or of a call without tensors.
func (m *Matcher) AheadCounts(e *dump.Entry) func(t *dump.Tensor) bool {
	n := dump.ParseName(e.Name)
	var all []*Rule
	for _, r := range m.ForOp(n.Op()) {
		if r.Classes() == nonfinite.NaN|nonfinite.Inf {
			all = append(all, r)
		}
	}
	coll := IsCollective(e.Name)
	spec := Collective(n.CollectiveAPI())
	return func(t *dump.Tensor) bool {
		for _, r := range all {
			if r.Matches(t.Field, t.Arg, t.Key) {
				return false
			}
		}
		if !coll {
			return true
		}
		switch {
		case spec.Batch || spec.NoTensors:
			return false
		case spec.Unknown:
			return t.Field == dump.InputArgs || t.Field == dump.InputKwargs || t.Field == dump.Output
		}
		switch t.Field {
		case dump.InputArgs, dump.InputKwargs:
			return !spec.RootSends && spec.IsSendInput(t.Field == dump.InputKwargs, t.Arg, t.Key)
		case dump.Output:
			return spec.IsReceiveOutput(t.Arg, e.NumArgs, e.Kwargs)
		}
		return false
	}
}

// The rule beside the dump (README "Heading for overflow"): the monitor's
// module statistics follow the dump's rule above; the training log's grad
// norm and loss scale have their own.
const (
	// AheadGradFrom: a grad norm is judged from this many logged points
	// on (the first steps of training set the gradients' scale).
	AheadGradFrom = 6
	// AheadGradPace: a grad norm that rises by at least this factor a
	// step over the rule's last points explodes; so does one past
	// AheadGradMedian times the median of the AheadGradHistory or more
	// points logged before them.
	AheadGradPace    = 2.0
	AheadGradMedian  = 10.0
	AheadGradHistory = 8
	// AheadScaleFalls: a loss scale that fell at this many logged steps
	// in a row warns; so does one that fell at AheadScaleFalls-1 in a row
	// and reaches AheadScaleFloor within AheadHorizon steps at that pace.
	AheadScaleFalls = 3
	// AheadScaleFloor is the smallest loss scale of Megatron-LM's and
	// DeepSpeed's dynamic scalers by default (min_loss_scale 1).
	AheadScaleFloor = 1.0
	// AheadAssumedDtype is the dtype a monitor row without one is judged
	// in when every dtype the monitor recorded is it.
	AheadAssumedDtype = "torch.float16"
)
