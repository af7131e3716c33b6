package policy

// The built-in exclusions, one line each. The reasons are what the verdict
// prints under "not counted as origins".
const (
	reasonUninitialised = "uninitialised memory from a creation op"
	reasonMask          = "-inf written on purpose (a mask)"
	reasonOverwritten   = "destination buffer that the op overwrites"
	reasonOut           = "out= destination buffer that the op overwrites"
	// ReasonReceiveBuffer is the reason for a collective's receive buffers
	// on the input side (see collective.go).
	ReasonReceiveBuffer = "receive buffer: holds whatever was there before the call"
)

// Builtin returns the exclusions every analysis applies, checked.
func Builtin() []Rule {
	var rules []Rule
	add := func(side, slot, values, reason string, ops ...string) {
		for _, op := range ops {
			rules = append(rules, Rule{Op: op, Side: side, Slot: slot, Values: values, Reason: reason})
		}
	}
	add("output", "*", "any", reasonUninitialised,
		"*.empty", "*.empty_like", "*.new_empty", "*.empty_strided", "*.new_empty_strided", "NPU.npu_empty_with_format")
	add("output", "*", "-inf", reasonMask,
		"*.masked_fill", "*.masked_fill_", "*.where", "*.triu", "*.triu_", "*.tril", "*.tril_",
		"*.full", "*.full_like", "*.new_full", "*.fill", "*.fill_", "*.masked_scatter", "*.masked_scatter_",
		"*.index_fill", "*.index_fill_")
	add("input", "0", "any", reasonOverwritten,
		"*.copy_", "*.zero_", "*.fill_", "*.normal_", "*.uniform_", "*.random_", "*.bernoulli_", "*.exponential_", "*.set_")
	add("input", "out", "any", reasonOut, "*")
	for i := range rules {
		if err := rules[i].check(); err != nil {
			panic("policy: built-in rule " + rules[i].Op + ": " + err.Error())
		}
	}
	return rules
}
