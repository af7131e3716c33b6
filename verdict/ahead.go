package verdict

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Ahead is a warning before the NaN: a statistic of one call (or one
// monitored module, or one metric of the training log) that climbs towards
// the limit of the dtype it is stored in, and when it will reach it at the
// pace it climbs. A run can be clean and still have entries here; they
// never change the exit status.
type Ahead struct {
	// Source is where the series was read: "dump", "monitor" or "log".
	Source string `json:"source"`
	// Op is the call's name as in the dump (the first step's name when it
	// shifts), the module's name for the monitor, the metric's for the log.
	Op string `json:"op"`
	// Ranks are the ranks whose series qualifies; the series is the first
	// of them whose value is largest at Step.
	Ranks []int `json:"ranks"`
	// Tensor is the slot (input_args.0, output.0, parameters.weight, …),
	// the monitor's file kind (actv, grad_unreduced, …) or "" for the log.
	Tensor string `json:"tensor"`
	// Stat is "max", "min" or "norm" (the dump and the monitor), or the
	// log's "grad_norm" and "loss_scale".
	Stat string `json:"stat"`
	// Dtype is the tensor's dtype ("torch.float16"); "" for the log.
	Dtype string `json:"dtype"`
	// Limit is the value the statistic overflows at, and LimitReason why
	// ("float16 max", "exp stores its result in float16: it overflows past
	// ln(65504) = 11.09"). For a falling loss scale it is the floor it
	// falls towards.
	Limit       float64 `json:"limit"`
	LimitReason string  `json:"limit_reason"`
	// Step is the last step of Series: the step the warning was given at.
	Step int `json:"step"`
	// Series is the statistic at each step read, oldest first.
	Series []Point `json:"series"`
	// Growth is the pace per step: a factor for a value that grows by
	// multiplication (1.9 = +90 % a step), an increment for the input of an
	// exp (Linear).
	Growth float64 `json:"growth"`
	Linear bool    `json:"linear,omitempty"`
	// StepsLeft is the estimate of steps until Limit is reached at that
	// pace, counted from Step (0: at the next step or within it).
	StepsLeft float64 `json:"steps_left"`
	// Module is the module chain, outermost first (construct.json), and
	// Code the user's line (stack.json), as the origin has them.
	Module []string `json:"module"`
	Code   *Frame   `json:"code"`
	// Text is the warning in one line, as the reports print it.
	Text string `json:"text"`
}

// Point is one value of a series.
type Point struct {
	Step  int     `json:"step"`
	Value float64 `json:"value"`
}

// SeriesText is the series in short: "2500 → 5600 → 11000 (steps 2-4)".
func (a Ahead) SeriesText() string {
	if len(a.Series) == 0 {
		return ""
	}
	vals := make([]string, len(a.Series))
	for i, p := range a.Series {
		vals[i] = FormatValue(p.Value)
	}
	return fmt.Sprintf("%s (steps %d-%d)", strings.Join(vals, " → "), a.Series[0].Step, a.Series[len(a.Series)-1].Step)
}

// PaceText is the pace: "×2.00 a step", or "+3.15 a step" for an input
// that climbs by additions.
func (a Ahead) PaceText() string {
	if a.Linear {
		return "+" + FormatValue(a.Growth) + " a step"
	}
	return fmt.Sprintf("×%.2f a step", a.Growth)
}

// WhenText says how soon it gets to its limit: "within the next step",
// "in about 3 steps".
func (a Ahead) WhenText() string {
	switch left := a.StepsLeft; {
	case left < 1:
		return "within the next step"
	case left < 1.5:
		return "in about 1 step"
	case math.IsInf(left, 1) || left > 1e6:
		return "eventually"
	default:
		return fmt.Sprintf("in about %.0f steps", left)
	}
}

// FormatValue writes a value short: whole numbers as they are, others
// with 4 significant digits.
func FormatValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e7 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
