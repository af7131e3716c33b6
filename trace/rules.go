package trace

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
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
	// Values is "nan", "inf" (either sign), "+inf", "-inf" or "any".
	Values string `json:"values"`
	Reason string `json:"reason"`

	classes dump.Class
}

// BuiltinRules are the exclusions every analysis applies.
func BuiltinRules() []Rule {
	var rules []Rule
	add := func(side, slot, values, reason string, ops ...string) {
		for _, op := range ops {
			rules = append(rules, Rule{Op: op, Side: side, Slot: slot, Values: values, Reason: reason})
		}
	}
	add("output", "*", "any", "uninitialised memory from a creation op",
		"*.empty", "*.empty_like", "*.new_empty", "*.empty_strided", "*.new_empty_strided", "NPU.npu_empty_with_format")
	add("output", "*", "-inf", "-inf written on purpose (a mask)",
		"*.masked_fill", "*.masked_fill_", "*.where", "*.triu", "*.triu_", "*.tril", "*.tril_",
		"*.full", "*.full_like", "*.new_full", "*.fill", "*.fill_", "*.masked_scatter", "*.masked_scatter_",
		"*.index_fill", "*.index_fill_")
	add("input", "0", "any", "destination buffer that the op overwrites",
		"*.copy_", "*.zero_", "*.fill_", "*.normal_", "*.uniform_", "*.random_", "*.bernoulli_", "*.exponential_", "*.set_")
	add("input", "out", "any", "out= destination buffer that the op overwrites", "*")
	for i := range rules {
		rules[i].classes, _ = parseValues(rules[i].Values)
	}
	return rules
}

// LoadRules reads a rules file: a JSON list of rules, or {"rules": [...]}.
func LoadRules(file string) ([]Rule, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	var rules []Rule
	if err := json.Unmarshal(data, &rules); err != nil {
		var wrapped struct {
			Rules []Rule `json:"rules"`
		}
		if err2 := json.Unmarshal(data, &wrapped); err2 != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		rules = wrapped.Rules
	}
	for i := range rules {
		if err := rules[i].check(); err != nil {
			return nil, fmt.Errorf("%s: rule %d: %w", file, i+1, err)
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

func parseValues(v string) (dump.Class, error) {
	var c dump.Class
	for _, part := range strings.Split(v, ",") {
		switch strings.ToLower(strings.TrimSpace(part)) {
		case "nan":
			c |= dump.NaN
		case "inf":
			c |= dump.Inf
		case "+inf":
			c |= dump.PosInf
		case "-inf":
			c |= dump.NegInf
		case "any", "*", "":
			c |= dump.NaN | dump.Inf
		default:
			return 0, fmt.Errorf("values %q: want nan, inf, +inf, -inf or any", v)
		}
	}
	return c, nil
}

// ruleSet finds the rules of an op, remembering the answer per op.
type ruleSet struct {
	rules []Rule
	byOp  map[string][]*Rule
}

func newRuleSet(rules []Rule) *ruleSet {
	return &ruleSet{rules: rules, byOp: map[string][]*Rule{}}
}

func (s *ruleSet) forOp(op string) []*Rule {
	if rs, ok := s.byOp[op]; ok {
		return rs
	}
	var rs []*Rule
	for i := range s.rules {
		if ok, _ := path.Match(s.rules[i].Op, op); ok {
			rs = append(rs, &s.rules[i])
		}
	}
	s.byOp[op] = rs
	return rs
}

// matches reports whether the rule covers a value in the given slot.
func (r *Rule) matches(f dump.Field, arg int, key string) bool {
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
