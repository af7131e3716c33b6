package trace

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"
)

// hints are what a NaN or Inf out of a given api usually means.
var hints = map[string]string{
	"log":                   "log of zero or of a negative value: clamp the input (x.clamp_min(eps)) or check the data",
	"log_softmax":           "log of an underflowed probability: use log_softmax on logits rather than log(softmax)",
	"sqrt":                  "sqrt at 0 has an infinite gradient, and sqrt of a negative value is NaN: add eps inside the sqrt",
	"rsqrt":                 "rsqrt of zero or of a negative value: add eps",
	"pow":                   "pow with a fractional exponent of a negative or zero base",
	"exp":                   "exp overflows above %s: subtract the max first%s",
	"div":                   "division by zero: add eps to the denominator",
	"__truediv__":           "division by zero: add eps to the denominator",
	"__rtruediv__":          "division by zero: add eps to the denominator",
	"reciprocal":            "reciprocal of zero: add eps",
	"half":                  "cast to float16 of a value beyond ±65504: keep this tensor in float32 or bfloat16",
	"to":                    "a cast to a narrower dtype overflowed: keep this tensor in float32 or bfloat16",
	"softmax":               "softmax of a row that is entirely -inf (a fully masked row) is NaN: make sure every row keeps one unmasked position",
	"cross_entropy":         "loss of a sample whose logits are not finite, or whose every target is ignored",
	"layer_norm":            "normalising a tensor with Inf, or a zero variance in low precision: check the input range and eps",
	"rms_norm":              "normalising a tensor with Inf, or eps too small for the dtype",
	"npu_rms_norm":          "normalising a tensor with Inf, or eps too small for the dtype",
	"npu_fusion_attention":  "fused attention overflow: check the scale, the mask, and the input range of q/k",
	"flash_attention_score": "fused attention overflow: check the scale, the mask, and the input range of q/k",
	"addcdiv_":              "Adam update divided by sqrt(v)+eps with eps too small for the dtype, or v non-finite",
	"all_reduce":            "a float16 sum overflowed during the reduction: reduce in float32, or scale the values first",
	"reduce_scatter_tensor": "a float16 sum overflowed during the reduction: reduce in float32, or scale the values first",
	"_reduce_scatter_base":  "a float16 sum overflowed during the reduction: reduce in float32, or scale the values first",
}

// hint is what a NaN or Inf out of the api usually means, in the words of
// the dtype it computed in ("" when unknown).
func hint(api, dtype string) (string, bool) {
	h, ok := hints[api]
	if !ok || !strings.Contains(h, "%s") {
		return h, ok
	}
	// exp overflows where its result passes the dtype's largest finite value
	limits := map[string]string{
		"float16": "~11.1 in float16", "bfloat16": "~88.7 in bfloat16 (its range is float32's)",
		"float32": "~88.7 in float32", "float64": "~709.8 in float64",
	}
	dt := strings.TrimPrefix(dtype, "torch.")
	l, ok := limits[dt]
	if !ok {
		l = "~88.7 in float32 and bfloat16, ~11.1 in float16"
	}
	more := ", or compute it in float32"
	if dt == "float32" || dt == "float64" {
		more = ""
	}
	return fmt.Sprintf(h, l, more), true
}

// inputDtype is the dtype of the root call's first input tensor.
func inputDtype(o *verdict.Origin) string {
	for _, t := range o.Inputs {
		if t.Dtype != "" {
			return t.Dtype
		}
	}
	return ""
}

// advice says what to do after this verdict.
func (b *builder) advice() []string {
	o, r := b.v.Origin, b.r
	var out []string
	n := dump.ParseName(o.Op)
	switch {
	case o.Unread:
		out = append(out, fmt.Sprintf("Dump %s at step %d: the value came from there.", rankList(o.Ranks), o.Step))
	case o.Captured:
		if h, ok := hint(n.API, inputDtype(o)); ok {
			out = append(out, fmt.Sprintf("%s: %s.", o.Op, h))
		}
		if o.Collective {
			break
		}
		out = append(out, fmt.Sprintf(
			"Reproduce it alone: once the tensors of step %d are dumped (nanhunt plan's config saves them), `nanhunt repro NEW_DUMP -o case && python3 case/repro.py` re-runs %s on them.",
			o.Step, n.Op()))
		if n.Dir == notation.Backward {
			out = append(out, fmt.Sprintf("It happened in the backward of %s: look at its gradient formula at the inputs of the forward call %s.", n.Op(), n.ForwardName()))
		}
		if o.Tie && len(o.Ranks) < len(r.ranks) {
			out = append(out, fmt.Sprintf("Compare what %s had that the others did not at step %d (their batch, their experts, their shard).", rankList(o.Ranks), o.Step))
		}
	case o.Stage == "optimizer":
		prev := b.m.prev
		switch {
		case prev != nil && prev.step == o.Step-1 && !prev.whole():
			out = append(out, fmt.Sprintf("%s reads a weight that was already non-finite when step %d began: the update at the end of step %d wrote it.", o.Op, o.Step, o.Step-1))
			out = append(out, fmt.Sprintf("Step %d was dumped but %s could not be read whole: dump it again (\"step\": [%d], \"level\": \"mix\") to see that update.", o.Step-1, b.m.notWholeWords(prev.unread), o.Step-1))
		case prev != nil && prev.step == o.Step-1:
			out = append(out, fmt.Sprintf("%s reads a weight that was already non-finite when step %d began: the update at the end of step %d wrote it.", o.Op, o.Step, o.Step-1))
			out = append(out, fmt.Sprintf("Step %d was dumped and is clean: its update ran outside the hooked calls (a fused or foreach optimizer, or torch._foreach_* ops); register the optimizer's step function with register_custom_api, or compare the gradients before it with msprobe's monitor (wg_distribution).", o.Step-1))
		default:
			out = append(out, fmt.Sprintf("%s reads a weight that was already non-finite when step %d began: the update at the end of step %d wrote it. Dump step %d (\"step\": [%d], \"level\": \"mix\") to see that update.", o.Op, o.Step, o.Step-1, o.Step-1, o.Step-1))
		}
	default:
		iv := o.Interval
		if iv != nil && iv.After != nil {
			out = append(out, fmt.Sprintf("The value was made between %s and %s, by code the dump does not cover.", iv.After.Op, iv.Before.Op))
		}
		if iv != nil && len(iv.Uncovered) > 0 {
			var where []string
			for _, f := range iv.Uncovered {
				where = append(where, fmt.Sprintf("%s (%s:%d)", f.Func, f.File, f.Line))
			}
			out = append(out, "Register the functions there for collection with debugger.register_custom_api(module, \"name\", api_prefix=...): "+strings.Join(where, ", ")+".")
		}
		out = append(out, "Dump again with \"level\": \"mix\" and \"risk_level\": \"ALL\" so that calls msprobe filters by default (casts, views, clamp) are recorded.")
	}
	if len(r.inherited) > 0 {
		out = append(out, fmt.Sprintf("%s got it without a recorded collective: if the job uses DDP or FSDP, their gradient all-reduce is not hooked; the verdict does not depend on it.", upperFirst(ranklist.Name(r.inherited))))
	}
	return out
}

// cleanAdvice is for a dump without any lasting anomaly.
func cleanAdvice(m *modeResult) []string {
	out := []string{}
	for _, r := range m.recovered {
		out = append(out, fmt.Sprintf("Step %d's %s at %s did not last (%s): the mark of an overflow that the loss scaler skipped, or a batch that was dropped. --strict reports it as the origin.",
			r.Step, r.Kind, r.Op, nextClean(r)))
	}
	if whole := wholeSteps(m); len(whole) > 0 && len(m.missingNodes) == 0 {
		out = append(out, fmt.Sprintf("No NaN or Inf in step(s) %s. If the training log shows NaN at a later step, dump that step and the one before it.", notation.FormatRanges(whole)))
	}
	files, summaries := splitBySummary(m.unread)
	if len(files) > 0 {
		out = append(out, fmt.Sprintf("%s could not be read whole (the warnings say why): nothing is known of them. Copy them whole, or dump those steps again, before taking this run as clean.",
			upperFirst(ranklist.UnreadWords(files))))
	}
	if len(summaries) > 0 {
		out = append(out, fmt.Sprintf("%s have no summary (the warnings say why): nothing is known of them. Summarise their nodes again (every step, the same run) and join again before taking this run as clean.",
			upperFirst(ranklist.UnreadWords(summaries))))
	}
	if len(m.missingNodes) > 0 {
		out = append(out, fmt.Sprintf("No summary from %s: run nanhunt summarize there (the same run, --nodes) and join again before taking this run as clean.",
			ranklist.MissingWords(m.missingNodes)))
	}
	return out
}

// splitBySummary parts unread rows into those of the dump's files and
// those a join has no summary of (a missing node's, or not summarised).
func splitBySummary(rows []verdict.UnreadRanks) (files, summaries []verdict.UnreadRanks) {
	for _, u := range rows {
		if u.Reason == "no summary" || u.Reason == "not summarised" {
			summaries = append(summaries, u)
		} else {
			files = append(files, u)
		}
	}
	return files, summaries
}

// wholeSteps are the steps scanned whose expected ranks were all read whole.
func wholeSteps(m *modeResult) []int {
	partial := map[int]bool{}
	for _, u := range m.unread {
		partial[u.Step] = true
	}
	var out []int
	for _, s := range m.scanned {
		if !partial[s] {
			out = append(out, s)
		}
	}
	return out
}

// upperFirst capitalises the first letter of an ASCII sentence.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// nextClean says which dumped step showed that an anomaly did not last.
func nextClean(r verdict.Recovered) string {
	if r.NextStep == r.Step+1 {
		return fmt.Sprintf("step %d is clean", r.NextStep)
	}
	return fmt.Sprintf("the next dumped step, %d, %d steps later, is clean", r.NextStep, r.NextStep-r.Step)
}

func rankList(ranks []int) string {
	if len(ranks) == 1 {
		return fmt.Sprintf("rank %d", ranks[0])
	}
	return "ranks " + notation.FormatRanges(ranks)
}
