package policy

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/safeio"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
)

// Rule makes the analysis ignore some non-finite values: those of the given
// classes in one slot of the calls whose op matches. Ignored values never
// make a call an origin, and each time a rule changes what a call would have
// meant, the verdict lists it under "suppressed" with the rule's reason.
type Rule struct {
	// Op is a glob (path.Match syntax) over the op: the entry name without
	// counter and direction, such as "Torch.empty" or "Tensor.masked_fill_".
	Op string `json:"op"`
	// Side is "input" (input_args, input_kwargs, input, parameters) or
	// "output".
	Side string `json:"side"`
	// Slot is a positional index ("0"), a keyword or parameter name
	// ("value"), or "*" (or empty) for every slot.
	Slot string `json:"slot,omitempty"`
	// Values is "nan", "inf" (either sign), "+inf", "-inf" or "any", or
	// several of them joined by commas.
	Values string `json:"values"`
	Reason string `json:"reason"`

	classes nonfinite.Class
}

// Classes are the values the rule takes away (valid once the rule is
// checked, as New and LoadRules do).
func (r *Rule) Classes() nonfinite.Class { return r.classes }

// maxRulesBytes bounds a rules file: a rule set is a few kilobytes.
const maxRulesBytes = 4 << 20

// LoadRules reads a rules file: a JSON list of rules, or {"rules": [...]}.
func LoadRules(file string) ([]Rule, error) {
	data, err := safeio.ReadFile(file, maxRulesBytes)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	rules, err := ParseRules(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return rules, nil
}

// ParseRules reads the JSON of a rules file.
func ParseRules(data []byte) ([]Rule, error) {
	var rules []Rule
	if err := json.Unmarshal(data, &rules); err != nil {
		var wrapped struct {
			Rules []Rule `json:"rules"`
		}
		if err2 := json.Unmarshal(data, &wrapped); err2 != nil {
			return nil, err
		}
		rules = wrapped.Rules
	}
	for i := range rules {
		if err := rules[i].check(); err != nil {
			return nil, fmt.Errorf("rule %d: %w", i+1, err)
		}
	}
	return rules, nil
}

func (r *Rule) check() error {
	if r.Op == "" {
		return fmt.Errorf("op is required")
	}
	if _, err := path.Match(r.Op, ""); err != nil {
		return fmt.Errorf("op %q: %w", r.Op, err)
	}
	if r.Side != "input" && r.Side != "output" {
		return fmt.Errorf("side is %q, want \"input\" or \"output\"", r.Side)
	}
	c, err := parseValues(r.Values)
	if err != nil {
		return err
	}
	r.classes = c
	if r.Reason == "" {
		r.Reason = "user rule " + r.Op
	}
	return nil
}

func parseValues(v string) (nonfinite.Class, error) {
	var c nonfinite.Class
	for _, part := range strings.Split(v, ",") {
		switch strings.ToLower(strings.TrimSpace(part)) {
		case "nan":
			c |= nonfinite.NaN
		case "inf":
			c |= nonfinite.Inf
		case "+inf":
			c |= nonfinite.PosInf
		case "-inf":
			c |= nonfinite.NegInf
		case "any", "*", "":
			c |= nonfinite.NaN | nonfinite.Inf
		default:
			return 0, fmt.Errorf("values %q: want nan, inf, +inf, -inf or any", v)
		}
	}
	return c, nil
}

// Matches reports whether the rule covers a value in the given slot.
func (r *Rule) Matches(f dump.Field, arg int, key string) bool {
	if (r.Side == "output") != (f == dump.Output) {
		return false
	}
	switch r.Slot {
	case "", "*":
		return true
	}
	if key != "" && r.Slot == key {
		return true
	}
	return r.Slot == strconv.Itoa(arg) && (key == "" || f == dump.InputArgs || f == dump.Output || f == dump.Input)
}
