package reference

// The rule set of README section 2: values a rule takes away never make an
// entry an origin.

// emptyOps write uninitialised memory: every output value is ignored.
var emptyOps = []string{"*.empty", "*.empty_like", "*.new_empty", "*.empty_strided", "*.new_empty_strided", "NPU.npu_empty_with_format"}

// maskOps write -inf on purpose: -inf in their outputs is ignored.
var maskOps = []string{
	"*.masked_fill", "*.masked_fill_", "*.where", "*.triu", "*.triu_", "*.tril", "*.tril_",
	"*.full", "*.full_like", "*.new_full", "*.fill", "*.fill_", "*.masked_scatter", "*.masked_scatter_",
	"*.index_fill", "*.index_fill_",
}

// destinationOps overwrite their first input: it is ignored.
var destinationOps = []string{"*.copy_", "*.zero_", "*.fill_", "*.normal_", "*.uniform_", "*.random_", "*.bernoulli_", "*.exponential_", "*.set_"}

func matchesAny(patterns []string, op string) bool {
	for _, p := range patterns {
		if glob(p, op) {
			return true
		}
	}
	return false
}

// side is where a value sits in an entry.
type side uint8

const (
	inputSide side = iota
	outputSide
)

// slot names a top-level argument: a position (pos >= 0) or a keyword,
// parameter or member name (kw).
type slot struct {
	field string // input_args, input_kwargs, input, parameters, output, or a parameters_grad member
	pos   int
	kw    string
}

// ruleEffect is what the rule set did to one value.
type ruleEffect struct {
	kept     holds
	maskNeg  bool // a mask rule took -inf away
	excluded bool
}

// applyRules filters what a value of a non-collective entry holds.
func applyRules(op string, sd side, sl slot, h holds) ruleEffect {
	switch sd {
	case outputSide:
		if matchesAny(emptyOps, op) {
			return ruleEffect{excluded: h != 0}
		}
		if matchesAny(maskOps, op) && h.has(holdNegInf) {
			return ruleEffect{kept: h &^ holdNegInf, maskNeg: true}
		}
	case inputSide:
		if sl.pos == 0 && (sl.field == "input_args" || sl.field == "input") && matchesAny(destinationOps, op) {
			return ruleEffect{excluded: h != 0}
		}
		if sl.field == "input_kwargs" && sl.kw == "out" {
			return ruleEffect{excluded: h != 0}
		}
	}
	return ruleEffect{kept: h}
}
