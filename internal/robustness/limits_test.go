package robustness

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// jsonObj is a JSON object whose members keep their order, jsonArr an
// array, jsonRaw a token written as it is (a number, null, -Infinity, or a
// string already quoted).
type (
	jsonObj []jsonMember
	jsonArr []any
	jsonRaw string
)

type jsonMember struct {
	name  string
	value any
}

// writeIndented writes v the way msprobe writes dump.json (Python's
// json.dump with indent=1, bare NaN and Infinity tokens kept).
func writeIndented(w *bufio.Writer, v any, depth int) {
	pad := func(d int) string { return strings.Repeat(" ", d) }
	sep := func(i, n int) string { return map[bool]string{true: ",\n", false: "\n"}[i < n-1] }
	switch v := v.(type) {
	case jsonObj:
		if len(v) == 0 {
			w.WriteString("{}")
			return
		}
		w.WriteString("{\n")
		for i, m := range v {
			fmt.Fprintf(w, "%s%q: ", pad(depth+1), m.name)
			writeIndented(w, m.value, depth+1)
			w.WriteString(sep(i, len(v)))
		}
		w.WriteString(pad(depth) + "}")
	case jsonArr:
		if len(v) == 0 {
			w.WriteString("[]")
			return
		}
		w.WriteString("[\n")
		for i, e := range v {
			w.WriteString(pad(depth + 1))
			writeIndented(w, e, depth+1)
			w.WriteString(sep(i, len(v)))
		}
		w.WriteString(pad(depth) + "]")
	case jsonRaw:
		w.WriteString(string(v))
	}
}

// tensorStats is a float32 tensor's statistics as msprobe writes them.
func tensorStats(max, min, mean, norm string) jsonObj {
	return jsonObj{{"type", jsonRaw(`"torch.Tensor"`)}, {"dtype", jsonRaw(`"torch.float32"`)}, {"shape", jsonArr{jsonRaw("4")}},
		{"Max", jsonRaw(max)}, {"Min", jsonRaw(min)}, {"Mean", jsonRaw(mean)}, {"Norm", jsonRaw(norm)}, {"requires_grad", jsonRaw("false")}}
}

var (
	finiteT = tensorStats("1.5", "-0.5", "0.1", "2.0")
	negInfT = tensorStats("0.5", "-Infinity", "-Infinity", "Infinity") // a mask: -inf where it hides
	negInfF = jsonObj{{"type", jsonRaw(`"float"`)}, {"value", jsonRaw("-Infinity")}}
)

// apiCall is one dump.json entry.
func apiCall(name string, inputs, outputs jsonArr) jsonMember {
	return jsonMember{name, jsonObj{{"input_args", inputs}, {"input_kwargs", jsonObj{}}, {"output", outputs}}}
}

// oneFOneBRank is one rank's calls in a 1F1B pipeline schedule: the
// forward of the first micro-batch, then for each later one the backward
// of the one before it and its own forward, then the last backward. Each
// layer of a forward builds an attention mask (masked_fill writes -inf,
// softmax reads it): 2 × layers × (microBatches − 1) calls holding -inf
// after the first backward entry. After them come extra calls holding -inf
// after the last backward entry, then the optimizer's update writing -inf.
func oneFOneBRank(microBatches, layers, afterLast int) jsonObj {
	var calls jsonObj
	masks, grads := 0, 0
	forward := func() {
		for range layers {
			calls = append(calls, apiCall(fmt.Sprintf("Tensor.masked_fill.%d.forward", masks), jsonArr{finiteT, finiteT, negInfF}, jsonArr{negInfT}),
				apiCall(fmt.Sprintf("Functional.softmax.%d.forward", masks), jsonArr{negInfT}, jsonArr{finiteT}))
			masks++
		}
	}
	backward := func() {
		calls = append(calls, apiCall(fmt.Sprintf("Torch.matmul.%d.backward", grads), jsonArr{finiteT}, jsonArr{finiteT}))
		grads++
	}
	forward()
	for range microBatches - 1 {
		backward()
		forward()
	}
	backward()
	for k := range afterLast {
		calls = append(calls, apiCall(fmt.Sprintf("Torch.triu.%d.forward", k), jsonArr{finiteT}, jsonArr{negInfT}))
	}
	return append(calls, apiCall("Tensor.addcdiv_.0.forward", jsonArr{finiteT, finiteT, finiteT}, jsonArr{negInfT}))
}

// writeOneRank writes in/step0/rank0/dump.json holding calls, laid out as
// msprobe writes it, and returns in.
func writeOneRank(t *testing.T, in string, calls jsonObj) string {
	t.Helper()
	dir := filepath.Join(in, "step0", "rank0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := jsonObj{{"task", jsonRaw(`"statistics"`)}, {"level", jsonRaw(`"L1"`)}, {"framework", jsonRaw(`"pytorch"`)},
		{"dump_data_dir", jsonRaw("null")}, {"data", calls}}
	writeWith(t, filepath.Join(dir, "dump.json"), func(w *bufio.Writer) {
		writeIndented(w, doc, 0)
		w.WriteString("\n")
	})
	return in
}

// fastPathLimitCases are files that reach a limit of the fast path: more
// calls holding -inf than it keeps for a second look, then an update that
// writes -inf (an anomaly after the last backward entry). No limit may drop
// the update and leave the rank clean, or a later or wrong origin.
func fastPathLimitCases() []adversarialCase {
	const maxTime, rss = 10 * time.Second, 64
	update := "nanhunt: the first Inf was born at step 0 on rank 0, in Tensor.addcdiv_.0.forward (optimizer), confidence high."
	return []adversarialCase{
		{
			class: "false clean", name: "update-after-20000-masks",
			input: "one rank of a 1F1B pipeline, msprobe's layout: 101 micro-batches x 100 layers, 20,000 masked_fill/softmax calls " +
				"holding -inf after the first backward entry, then Tensor.addcdiv_ writing -inf after the last",
			answer: "exit 1: the update is the origin",
			setup: func(t *testing.T, in, out string) []string {
				return []string{"trace", writeOneRank(t, in, oneFOneBRank(101, 100, 0))}
			},
			exit: exitAnomaly, message: "^" + regexp.QuoteMeta(update), maxTime: maxTime, maxRSSMiB: rss,
		},
		{
			class: "false clean", name: "update-after-masks-past-the-last-backward",
			input: "the same schedule (2 micro-batches, 1 layer), then 4,196 calls holding -inf after the last backward entry " +
				"(more than the walk keeps for a second look), then the update writing -inf",
			answer: "exit 1: the file is parsed whole; the update is the origin",
			setup: func(t *testing.T, in, out string) []string {
				return []string{"trace", writeOneRank(t, in, oneFOneBRank(2, 1, 4196))}
			},
			exit: exitAnomaly, message: "^" + regexp.QuoteMeta(update), maxTime: maxTime, maxRSSMiB: rss,
		},
	}
}
