package trainlog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The formats of Options.Format and File.Format.
const (
	FormatAuto      = "auto"      // detect per file (Options.Format only)
	FormatMegatron  = "megatron"  // Megatron-LM iteration lines
	FormatDeepSpeed = "deepspeed" // DeepSpeed and HF-Trainer lines
	FormatJSON      = "json"      // JSON or JSON Lines records
	FormatGeneric   = "generic"   // text read through user patterns
)

// Options configures [Read]. The zero value detects the format of each file
// and uses the default patterns and step offsets.
type Options struct {
	// Format is "auto" (or empty), "megatron", "deepspeed", "json" or
	// "generic". A named format recognises only its own lines; "generic"
	// reads JSON files as "json" does and text files through Patterns.
	Format string
	// Patterns are the user's patterns for the step, loss and grad norm.
	Patterns Patterns
	// StepOffset, when not nil, replaces the default offset of every file:
	// Step = Iteration + *StepOffset.
	StepOffset *int
	// KeepFinite is how many plainly finite records per file are kept in
	// Log.Records: 0 means 10000, a negative number none.
	KeepFinite int
	// Ahead, when set, follows each rank's grad norm and loss scale, step
	// after step, and keeps the series it says warn before the NaN
	// (Log.Climbs).
	Ahead AheadJudge
}

// Patterns are user patterns for the step, the loss and the grad norm.
//
// In a text file each is a regular expression applied to every line. The
// value is the first capture group, or, with no group, the number right
// after the match ("lm loss:" reads "lm loss: 2.5"). A line may hold a step
// and values; a line with only values belongs to the last step seen on its
// rank. With no Step pattern, value lines are numbered 0, 1, 2, ... in order.
//
// In a JSON file each is matched against key names: a key equal to the
// pattern first, else the first key the pattern matches as a regular
// expression. Without a pattern the defaults are step, iteration, iter or
// global_step for the step; loss, lm loss, local_loss or train_loss, else
// the first key containing "loss" but not "scale", for the loss; and
// grad_norm, grad norm or gradient_norm for the grad norm.
type Patterns struct {
	Step     string
	Loss     string
	GradNorm string
}

// IsZero reports whether no pattern is set.
func (p Patterns) IsZero() bool { return p == Patterns{} }

// Set sets the pattern called name ("step", "loss" or "grad_norm"; see
// [ParsePattern] for the accepted spellings) after checking that expr
// compiles.
func (p *Patterns) Set(name, expr string) error {
	canon, ok := patternNames[normName(name)]
	if !ok {
		return fmt.Errorf("unknown pattern name %q: want step, loss or grad_norm", name)
	}
	if err := checkExpr(canon, expr); err != nil {
		return err
	}
	switch canon {
	case "step":
		p.Step = expr
	case "loss":
		p.Loss = expr
	default:
		p.GradNorm = expr
	}
	return nil
}

var patternNames = map[string]string{
	"step": "step", "iteration": "step", "iter": "step",
	"loss":      "loss",
	"grad_norm": "grad_norm", "gradnorm": "grad_norm", "grad": "grad_norm", "gradient_norm": "grad_norm",
}

// normName lower-cases a pattern name and spells '-' and ' ' as '_'.
func normName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer("-", "_", " ", "_").Replace(s)
}

// ParsePattern splits a command-line pattern "name=expr", such as
// `step=iteration (\d+)`, `loss=local_loss` or `grad_norm=grad norm: (\S+)`,
// into its canonical name ("step", "loss" or "grad_norm") and expression.
// Names may also be spelled iteration, iter, grad-norm, gradnorm or grad. The
// expression must compile as a regular expression with at most one capture
// group.
func ParsePattern(s string) (name, expr string, err error) {
	n, e, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("bad pattern %q: want name=expr, e.g. step=iteration (\\d+)", s)
	}
	canon, known := patternNames[normName(n)]
	if !known {
		return "", "", fmt.Errorf("bad pattern %q: unknown name %q, want step, loss or grad_norm", s, n)
	}
	if err := checkExpr(canon, e); err != nil {
		return "", "", err
	}
	return canon, e, nil
}

// checkExpr checks that a pattern compiles with at most one group.
func checkExpr(name, expr string) error {
	if expr == "" {
		return fmt.Errorf("empty %s pattern", name)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return fmt.Errorf("bad %s pattern %q: %w", name, expr, err)
	}
	if re.NumSubexp() > 1 {
		return fmt.Errorf("bad %s pattern %q: %d capture groups, want at most one", name, expr, re.NumSubexp())
	}
	return nil
}

// Mapping says how a log's iterations map to msprobe's steps.
type Mapping struct {
	// Offset is added to an iteration to get the step.
	Offset int `json:"offset"`
	// Source is "default for <format>" or "user".
	Source string `json:"source"`
	// Text is the rule in words, e.g. "step = iteration - 1".
	Text string `json:"text"`
}

// defaultOffset is the step offset of a format.
func defaultOffset(format string) int {
	switch format {
	case FormatMegatron, FormatDeepSpeed:
		return -1
	}
	return 0
}

// mappingFor returns the mapping of a file of the given format.
func mappingFor(format string, user *int) Mapping {
	if user != nil {
		return newMapping(*user, "user")
	}
	f := format
	if f == "" {
		f = "unrecognised input"
	}
	return newMapping(defaultOffset(format), "default for "+f)
}

func newMapping(off int, source string) Mapping {
	text := "step = iteration"
	switch {
	case off > 0:
		text += " + " + strconv.Itoa(off)
	case off < 0:
		text += " - " + strconv.Itoa(-off)
	}
	return Mapping{Offset: off, Source: source, Text: text}
}
