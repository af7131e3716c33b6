package trace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// This file checks each trap of the analysis on tiny hand-written dumps.
// A call is written as "Name field=classes ...", where a field is in (the
// input_args), kw:<name> (an input kwarg), param (module parameters), out
// (the output), grad (backward input) and classes are comma-separated
// tensor values: 1 (finite), nan, inf, -inf, or c-inf / c1 for a float
// constant argument instead of a tensor. Collectives take group=<ranks>
// and peer=<rank>.

func tensorJSON(v string) string {
	switch v {
	case "nan":
		return `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": NaN, "Min": NaN, "Mean": NaN, "Norm": NaN, "requires_grad": true}`
	case "inf":
		return `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": Infinity, "Min": 0.5, "Mean": Infinity, "Norm": Infinity, "requires_grad": true}`
	case "-inf":
		return `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 0.5, "Min": -Infinity, "Mean": -Infinity, "Norm": Infinity, "requires_grad": false}`
	case "c-inf":
		return `{"type": "float", "value": -Infinity}`
	case "c1":
		return `{"type": "float", "value": 1.0}`
	case "null":
		return "null"
	case "xor":
		return `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "requires_grad": true, "md5": "0x00000000deadbeef"}`
	}
	return `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 1.5, "Min": -0.5, "Mean": 0.1, "Norm": 2.0, "requires_grad": true}`
}

func listJSON(vals string) string {
	var parts []string
	for _, v := range strings.Split(vals, ",") {
		parts = append(parts, tensorJSON(v))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// entryJSON turns one call description into a dump.json member.
func entryJSON(spec string) string {
	f := strings.Fields(spec)
	name := f[0]
	var fields, kwargs []string
	backward := strings.HasSuffix(name, ".backward")
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "in" && backward:
			fields = append(fields, `"input": `+listJSON(v))
		case k == "in":
			fields = append(fields, `"input_args": `+listJSON(v))
		case k == "out":
			fields = append(fields, `"output": `+listJSON(v))
		case k == "param":
			fields = append(fields, `"parameters": {"weight": `+tensorJSON(v)+`}`)
		case k == "group":
			ranks := "[" + v + "]"
			kwargs = append(kwargs, fmt.Sprintf(`"group": {"type": "torch.ProcessGroup", "group_ranks": %s, "group_id": "g%s"}`, ranks, strings.ReplaceAll(v, ",", "_")))
		case k == "peer":
			kw := "dst"
			if strings.Contains(name, "recv") {
				kw = "src"
			}
			kwargs = append(kwargs, fmt.Sprintf(`%q: {"type": "int", "value": %s}`, kw, v))
		case strings.HasPrefix(k, "kw:"):
			kwargs = append(kwargs, fmt.Sprintf(`%q: %s`, strings.TrimPrefix(k, "kw:"), tensorJSON(v)))
		case k == "is_nan":
			fields = append(fields, `"is_nan": `+v)
		}
	}
	if !backward {
		fields = append(fields, `"input_kwargs": {`+strings.Join(kwargs, ", ")+`}`)
	}
	return fmt.Sprintf("%q: {%s}", name, strings.Join(fields, ", "))
}

// writeRun writes dump_path/stepN/rankR/dump.json for each rank's calls.
func writeRun(t *testing.T, step int, ranks map[int][]string) string {
	t.Helper()
	root := t.TempDir()
	for rank, calls := range ranks {
		dir := filepath.Join(root, fmt.Sprintf("step%d", step), fmt.Sprintf("rank%d", rank))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var entries []string
		for _, c := range calls {
			entries = append(entries, entryJSON(c))
		}
		doc := indentLikeMsprobe(t, `{"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {`+strings.Join(entries, ",\n")+"}}")
		if err := os.WriteFile(filepath.Join(dir, "dump.json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func trace1(t *testing.T, root string) *verdict.Verdict {
	t.Helper()
	v, err := Run(context.Background(), Options{Path: root})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// same returns the same program on every rank.
func same(n int, calls ...string) map[int][]string {
	m := map[int][]string{}
	for r := 0; r < n; r++ {
		m[r] = calls
	}
	return m
}

func TestTrapInfBeforeNaN(t *testing.T) {
	v := trace1(t, writeRun(t, 3, same(1,
		"Torch.exp.0.forward in=1 out=inf",
		"Tensor.sum.0.forward in=inf out=inf",
		"Tensor.__truediv__.0.forward in=inf,inf out=nan",
		"Tensor.mean.0.forward in=nan out=nan",
	)))
	if o := v.Origin; o == nil || o.Op != "Torch.exp.0.forward" || o.Kind != "inf" || !o.Captured {
		t.Fatalf("origin = %+v, want the exp overflow", o)
	}
	if v.FirstNaN == nil || v.FirstNaN.Op != "Tensor.__truediv__.0.forward" {
		t.Errorf("first NaN = %+v, want the division", v.FirstNaN)
	}
}

func TestTrapLegitimateMasks(t *testing.T) {
	mask := []string{
		"Torch.full.0.forward out=-inf",         // mask built on purpose
		"Torch.triu.0.forward in=-inf out=-inf", // flows on
		"Tensor.__add__.0.forward in=1,-inf out=-inf",
		"Functional.softmax.0.forward in=-inf out=1",
		"Tensor.masked_fill.0.forward in=1,1,c-inf out=-inf", // -inf constant argument
		"Functional.softmax.1.forward in=-inf out=1",
		"Tensor.__add__.1.forward in=1,-inf out=-inf", // a mask buffer made before the step
		"Functional.softmax.2.forward in=-inf out=1",
	}
	v := trace1(t, writeRun(t, 0, same(2, mask...)))
	if v.Anomaly {
		t.Fatalf("legitimate masks reported as an anomaly: %+v", v.Origin)
	}
	found := false
	for _, s := range v.Suppressed {
		if s.Op == "Torch.full" && s.Values == "-inf" {
			found = true
		}
	}
	if !found {
		t.Errorf("the mask construction is not listed as suppressed: %+v", v.Suppressed)
	}

	// A softmax over a fully masked row makes NaN from masked -inf only:
	// that softmax is the origin; the mask does not hide the new kind.
	bad := append(append([]string{}, mask[:3]...), "Functional.softmax.0.forward in=-inf out=nan", "Torch.matmul.0.forward in=nan,1 out=nan")
	v = trace1(t, writeRun(t, 0, map[int][]string{0: mask, 1: bad}))
	if o := v.Origin; o == nil || o.Op != "Functional.softmax.0.forward" || o.Kind != "nan" || o.Ranks[0] != 1 || !o.Captured {
		t.Fatalf("origin = %+v, want the softmax on rank 1", o)
	}
}

func TestTrapNegInfGrowsIntoNaN(t *testing.T) {
	// log(0) = -inf is not a mask; 0 * -inf = NaN two calls later.
	v := trace1(t, writeRun(t, 0, same(1,
		"Torch.log.0.forward in=1 out=-inf",
		"Tensor.__mul__.0.forward in=-inf,1 out=nan",
	)))
	if o := v.Origin; o == nil || o.Op != "Torch.log.0.forward" || o.Kind != "inf" || o.Confidence != "medium" {
		t.Fatalf("origin = %+v, want log(0) with medium confidence", o)
	}
	// The same -inf that never grows into NaN is only listed.
	v = trace1(t, writeRun(t, 0, same(1, "Torch.log.0.forward in=1 out=-inf", "Functional.softmax.0.forward in=-inf out=1")))
	if v.Anomaly || len(v.Suppressed) == 0 {
		t.Errorf("a harmless -inf: anomaly %v, suppressed %+v", v.Anomaly, v.Suppressed)
	}
}

func TestTrapCreationAndOutBuffers(t *testing.T) {
	v := trace1(t, writeRun(t, 0, same(2,
		"Torch.empty.0.forward out=nan",
		"Tensor.copy_.0.forward in=nan,1 out=1",
		"Torch.empty_like.0.forward in=1 out=inf",
		"Torch.matmul.0.forward in=1,1 kw:out=inf out=1",
		"Tensor.half.0.forward in=1 out=1",
	)))
	if v.Anomaly {
		t.Fatalf("uninitialised memory reported as an anomaly: %+v", v.Origin)
	}
	// A cast that overflows is never filtered.
	v = trace1(t, writeRun(t, 0, same(1, "Torch.empty.0.forward out=nan", "Tensor.half.0.forward in=1 out=inf")))
	if o := v.Origin; o == nil || o.Op != "Tensor.half.0.forward" || o.Kind != "inf" {
		t.Fatalf("origin = %+v, want the cast", o)
	}
}

func TestTrapReceiveBuffersAndLaterCollectives(t *testing.T) {
	// Old dumps record receive buffers before the call: garbage, never a source.
	ranks := map[int][]string{
		0: {"Torch.log.0.forward in=1 out=nan", "Distributed.all_gather.0.forward in=nan,nan group=0,1 out=nan,nan", "Distributed.all_reduce.0.forward in=nan group=0,1 out=nan"},
		1: {"Torch.log.0.forward in=1 out=1", "Distributed.all_gather.0.forward in=nan,1 group=0,1 out=nan,1", "Distributed.all_reduce.0.forward in=nan group=0,1 out=nan"},
	}
	v := trace1(t, writeRun(t, 0, ranks))
	o := v.Origin
	if o == nil || len(o.Ranks) != 1 || o.Ranks[0] != 0 || o.Op != "Torch.log.0.forward" {
		t.Fatalf("origin = %+v, want rank 0 only (rank 1's all_gather buffer is garbage)", o)
	}
	if c := v.Carrier; c == nil || c.Op != "Distributed.all_gather.0.forward" || !equalInts(c.ToRanks, []int{1}) {
		t.Errorf("carrier = %+v, want the all_gather (not the later all_reduce, NaN everywhere)", c)
	}
}

func TestTrapTieAndGroups(t *testing.T) {
	// Ranks 1 and 3 make NaN at the same call; the all_reduce in group
	// {0,1} and the one in group {2,3} carry it to ranks 0 and 2.
	clean := "Tensor.mul.0.forward in=1 out=1"
	bad := "Tensor.mul.0.forward in=1 out=nan"
	ranks := map[int][]string{
		0: {clean, "Distributed.all_reduce.0.forward in=1 group=0,1 out=nan"},
		1: {bad, "Distributed.all_reduce.0.forward in=nan group=0,1 out=nan"},
		2: {clean, "Distributed.all_reduce.0.forward in=1 group=2,3 out=nan"},
		3: {bad, "Distributed.all_reduce.0.forward in=nan group=2,3 out=nan"},
	}
	v := trace1(t, writeRun(t, 1, ranks))
	o := v.Origin
	if o == nil || !o.Tie || !equalInts(o.Ranks, []int{1, 3}) || o.Confidence != "medium" {
		t.Fatalf("origin = %+v, want a tie of ranks 1 and 3", o)
	}
	if len(v.Spread) != 2 || !equalInts(v.Spread[0].FromRanks, []int{1}) || !equalInts(v.Spread[0].ToRanks, []int{0}) ||
		!equalInts(v.Spread[1].FromRanks, []int{3}) || !equalInts(v.Spread[1].ToRanks, []int{2}) {
		t.Errorf("spread = %+v, want 1->0 and 3->2 (paired by group)", v.Spread)
	}
}

func TestTrapPointToPoint(t *testing.T) {
	ranks := map[int][]string{
		0: {"Torch.sqrt.0.forward in=1 out=nan", "Distributed.send.0.forward in=nan peer=1"},
		1: {"Distributed.recv.0.forward in=nan peer=0 out=nan", "Tensor.add.0.forward in=nan out=nan"},
	}
	v := trace1(t, writeRun(t, 2, ranks))
	if o := v.Origin; o == nil || !equalInts(o.Ranks, []int{0}) || o.Op != "Torch.sqrt.0.forward" {
		t.Fatalf("origin = %+v, want rank 0 (rank 1's recv buffer is garbage)", o)
	}
	if c := v.Carrier; c == nil || c.Op != "Distributed.send.0.forward" || !equalInts(c.FromRanks, []int{0}) || !equalInts(c.ToRanks, []int{1}) {
		t.Errorf("carrier = %+v, want the send from 0 to 1", c)
	}
}

func TestTrapCollectiveOrigin(t *testing.T) {
	// Finite inputs everywhere, Inf out of the sum: the all_reduce is the origin.
	v := trace1(t, writeRun(t, 0, same(3, "Tensor.mul.0.forward in=1 out=1", "Distributed.all_reduce.0.forward in=1 group=0,1,2 out=inf", "Tensor.div_.0.forward in=inf out=inf")))
	o := v.Origin
	if o == nil || !o.Collective || !o.Captured || o.Op != "Distributed.all_reduce.0.forward" || o.Kind != "inf" || !equalInts(o.Ranks, []int{0, 1, 2}) || o.Tie {
		t.Fatalf("origin = %+v, want the collective itself on all ranks", o)
	}
	if v.Carrier != nil {
		t.Errorf("carrier = %+v, want none", v.Carrier)
	}
}

func TestTrapNotCaptured(t *testing.T) {
	// Rank 1's first sign is a call whose input is already NaN (the call that
	// made it was filtered out of the dump).
	ranks := map[int][]string{
		0: {"Tensor.mul.0.forward in=1 out=1", "Tensor.add.0.forward in=1 out=1", "Distributed.all_reduce.0.forward in=1 out=nan"},
		1: {"Tensor.mul.0.forward in=1 out=1", "Tensor.add.0.forward in=nan out=nan", "Distributed.all_reduce.0.forward in=nan out=nan"},
	}
	v := trace1(t, writeRun(t, 4, ranks))
	o := v.Origin
	if o == nil || o.Captured || o.Op != "Tensor.add.0.forward" || !equalInts(o.Ranks, []int{1}) || o.Confidence != "low" || o.Stage != "forward" {
		t.Fatalf("origin = %+v, want not captured on rank 1 at Tensor.add", o)
	}
	if iv := o.Interval; iv == nil || iv.After == nil || iv.After.Op != "Tensor.mul.0.forward" || iv.Before.Op != "Tensor.add.0.forward" {
		t.Errorf("interval = %+v, want between Tensor.mul.0 and Tensor.add.0", o.Interval)
	}
	if c := v.Carrier; c == nil || c.Op != "Distributed.all_reduce.0.forward" {
		t.Errorf("carrier = %+v (groups not recorded: paired by name)", c)
	}
}

func TestTrapOptimizerAndUnrecordedPath(t *testing.T) {
	// Rank 0 makes NaN in the update (after the last backward call); rank 1
	// first shows it later with no recorded collective (DDP's C++ all-reduce).
	ranks := map[int][]string{
		0: {"Torch.sqrt.0.backward in=1 out=1", "Tensor.addcdiv_.0.forward in=1,1,1 out=nan"},
		1: {"Torch.sqrt.0.backward in=1 out=1", "Tensor.addcdiv_.0.forward in=1,1,1 out=1", "Tensor.add_.0.forward in=nan out=nan"},
	}
	v := trace1(t, writeRun(t, 7, ranks))
	o := v.Origin
	if o == nil || o.Stage != "optimizer" || !equalInts(o.Ranks, []int{0}) || o.Op != "Tensor.addcdiv_.0.forward" || o.Confidence != "medium" {
		t.Fatalf("origin = %+v, want rank 0's optimizer call, medium confidence", o)
	}
	var role string
	for _, c := range v.Candidates {
		if c.Rank == 1 {
			role = c.Role
		}
	}
	if !strings.Contains(role, "not record") {
		t.Errorf("rank 1's role = %q, want a path the dump does not record", role)
	}
}

func TestTrapNanCheckFlag(t *testing.T) {
	v := trace1(t, writeRun(t, 0, same(1, "Functional.linear.0.forward in=1 out=1 is_nan=0", "NPU.npu_fusion_attention.0.forward in=1 out=1 is_nan=1")))
	if o := v.Origin; o == nil || o.Kind != "overflow" || o.Op != "NPU.npu_fusion_attention.0.forward" || o.Confidence != "medium" {
		t.Fatalf("origin = %+v, want the flagged call, kind overflow", o)
	}
}

// writeSteps writes several steps of the same ranks.
func writeSteps(t *testing.T, steps map[int]map[int][]string) string {
	t.Helper()
	root := t.TempDir()
	for step, ranks := range steps {
		one := writeRun(t, step, ranks)
		src := filepath.Join(one, fmt.Sprintf("step%d", step))
		if err := os.Rename(src, filepath.Join(root, fmt.Sprintf("step%d", step))); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestTrapRecoveredStep(t *testing.T) {
	clean := same(2, "Torch.mul.0.forward in=1 out=1", "Torch.mul.0.backward in=1 out=1")
	overflow := map[int][]string{
		0: {"Torch.mul.0.forward in=1 out=1", "Torch.mul.0.backward in=1 out=inf"},
		1: clean[1],
	}
	nan := map[int][]string{
		0: clean[0],
		1: {"Torch.log.0.forward in=1 out=nan", "Torch.mul.0.backward in=nan out=nan"},
	}
	// step 3 overflows on rank 0, step 4 is clean again, step 5 goes NaN for good
	root := writeSteps(t, map[int]map[int][]string{2: clean, 3: overflow, 4: clean, 5: nan, 6: nan})
	v := trace1(t, root)
	if o := v.Origin; o == nil || o.Step != 5 || o.Op != "Torch.log.0.forward" || !equalInts(o.Ranks, []int{1}) {
		t.Fatalf("origin = %+v, want step 5's log on rank 1", o)
	}
	if len(v.Recovered) != 1 || v.Recovered[0].Step != 3 || v.Recovered[0].Op != "Torch.mul.0.backward" || v.Recovered[0].Kind != "inf" {
		t.Errorf("recovered = %+v, want step 3's overflow", v.Recovered)
	}
	strict, err := Run(context.Background(), Options{Path: root, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if o := strict.Origin; o == nil || o.Step != 3 {
		t.Errorf("strict origin = %+v, want step 3", o)
	}
	// Only a recovered overflow: no lasting anomaly, but it is reported.
	v = trace1(t, writeSteps(t, map[int]map[int][]string{3: overflow, 4: clean}))
	if v.Anomaly || len(v.Recovered) != 1 {
		t.Errorf("anomaly %v, recovered %+v", v.Anomaly, v.Recovered)
	}
	// Only every n-th step dumped: the next dumped step decides, and the
	// verdict says how far it is.
	v = trace1(t, writeSteps(t, map[int]map[int][]string{3: overflow, 5: clean}))
	if v.Anomaly || len(v.Recovered) != 1 || v.Recovered[0].NextStep != 5 {
		t.Errorf("anomaly %v, recovered %+v, want step 3 recovered by step 5", v.Anomaly, v.Recovered)
	}
	// The last dumped step: nothing says it recovered.
	v = trace1(t, writeSteps(t, map[int]map[int][]string{2: clean, 3: overflow}))
	if o := v.Origin; o == nil || o.Step != 3 || len(v.Recovered) != 0 {
		t.Errorf("origin = %+v, recovered %+v, want step 3", o, v.Recovered)
	}
}

func TestStatlessDumps(t *testing.T) {
	// summary_mode xor: no Max/Min anywhere. Nothing can be decided: an error.
	root := writeRun(t, 0, same(2, "Torch.log.0.forward in=xor out=xor", "Tensor.add.0.forward in=xor,xor out=xor"))
	if _, err := Run(context.Background(), Options{Path: root}); err == nil || !strings.Contains(err.Error(), "summary_mode") {
		t.Errorf("err = %v, want one that names summary_mode", err)
	}
	// Partly stat-less: an answer, and a warning.
	root = writeRun(t, 0, map[int][]string{
		0: {"Torch.log.0.forward in=xor out=xor", "Tensor.add.0.forward in=xor,xor out=xor"},
		1: {"Torch.log.0.forward in=1 out=nan", "Tensor.add.0.forward in=nan out=nan"},
	})
	v := trace1(t, root)
	if v.Origin == nil || v.Origin.Op != "Torch.log.0.forward" {
		t.Fatalf("origin = %+v", v.Origin)
	}
	found := false
	for _, w := range v.Warnings {
		found = found || strings.Contains(w.Message, "no Max/Min")
	}
	if !found {
		t.Errorf("no warning about the stat-less rank: %+v", v.Warnings)
	}
}

// Rank 0 makes NaN and sends it into a collective of group {0,2} that
// leaves rank 2's buffer clean, then carries it through more collectives
// of group {0,1} than a rank keeps whole, before the second one of group
// {0,2} reaches rank 2: rank 0's side of that one (neither among its first
// non-finite collectives nor the first of its group) is read again from
// its file, and it is the sender. When the file cannot be read again,
// rank 0 is inferred to be the sender (it held the anomaly), and its scan
// notes why.
func TestSenderBeyondTheCollectiveCap(t *testing.T) {
	r0 := []string{"Torch.log.0.forward in=1 out=nan", "Distributed.all_reduce.0.forward in=nan group=0,2 out=nan"}
	r1 := []string{"Torch.log.0.forward in=1 out=1"}
	r2 := []string{"Torch.log.0.forward in=1 out=1", "Distributed.all_reduce.0.forward in=1 group=0,2 out=1"}
	for k := 1; k <= normalLimits.colls+44; k++ {
		r0 = append(r0, fmt.Sprintf("Distributed.all_reduce.%d.forward in=nan group=0,1 out=nan", k))
		r1 = append(r1, fmt.Sprintf("Distributed.all_reduce.%d.forward in=1 group=0,1 out=nan", k-1))
	}
	last := fmt.Sprintf("Distributed.all_reduce.%d.forward", normalLimits.colls+45)
	r0 = append(r0, last+" in=nan group=0,2 out=nan")
	r2 = append(r2, "Distributed.all_reduce.1.forward in=1 group=0,2 out=nan")
	for _, c := range []struct {
		name     string
		gone     bool // rank 0's dump.json is gone when the step is analysed
		inferred bool
		op       string
	}{
		{"read again", false, false, last},
		{"not readable again", true, true, "Distributed.all_reduce.1.forward"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := writeRun(t, 0, map[int][]string{0: r0, 1: r1, 2: r2})
			l, err := dump.Discover(root)
			if err != nil {
				t.Fatal(err)
			}
			sc := newScanner(policy.Default(), nil)
			scans := map[int]*rankScan{}
			for _, rd := range l.Dirs {
				scans[rd.Rank] = sc.scanFile(context.Background(), rd, scanAll)
			}
			if !scans[0].collsFull {
				t.Fatal("rank 0 kept every collective: the test does not reach the limit")
			}
			if c.gone {
				if err := os.Remove(scans[0].dir.Dump); err != nil {
					t.Fatal(err)
				}
			}
			r := analyseStep(0, "", scans, roster{known: map[int]bool{0: true, 1: true, 2: true}})
			if !equalInts(r.sources, []int{0}) {
				t.Fatalf("sources = %v, want [0]", r.sources)
			}
			var toRank2 *hop
			for _, h := range r.hops {
				if equalInts(h.to, []int{2}) {
					toRank2 = h
				}
			}
			if toRank2 == nil || !equalInts(toRank2.from, []int{0}) || toRank2.inferred != c.inferred || toRank2.op != c.op {
				t.Errorf("hop to rank 2 = %+v, want from rank 0, op %s, inferred %v", toRank2, c.op, c.inferred)
			}
			if noted := len(scans[0].limits) > 0; noted != c.gone {
				t.Errorf("rank 0 notes %q; want a note %v", scans[0].limits, c.gone)
			}
		})
	}
}

// indentLikeMsprobe rewrites a document the way Python's json.dump(indent=1)
// lays it out, so that the byte search and its use of the layout are
// exercised as on real dumps.
func indentLikeMsprobe(t *testing.T, doc string) string {
	t.Helper()
	lx := jsonlex.New(strings.NewReader(doc), jsonlex.Options{})
	var b strings.Builder
	depth, first := 0, true
	newline := func() {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(" ", depth))
	}
	for {
		tok, err := lx.Next()
		if err != nil {
			t.Fatalf("test document: %v", err)
		}
		switch tok.Kind {
		case jsonlex.EOF:
			return b.String()
		case jsonlex.ObjectEnd, jsonlex.ArrayEnd:
			depth--
			if !first {
				newline()
			}
			b.WriteString(map[jsonlex.Kind]string{jsonlex.ObjectEnd: "}", jsonlex.ArrayEnd: "]"}[tok.Kind])
			first = false
			continue
		}
		if lx.Depth() > 0 || tok.Kind == jsonlex.ObjectStart || tok.Kind == jsonlex.ArrayStart {
			// a new member or element (not the value after a name)
			if b.Len() > 0 && !strings.HasSuffix(b.String(), ": ") {
				if !first {
					b.WriteByte(',')
				}
				if depth > 0 {
					newline()
				}
			}
		}
		first = false
		switch tok.Kind {
		case jsonlex.ObjectStart:
			b.WriteByte('{')
			depth++
			first = true
		case jsonlex.ArrayStart:
			b.WriteByte('[')
			depth++
			first = true
		case jsonlex.Name:
			b.WriteString(strconv.Quote(string(tok.Bytes)) + ": ")
		case jsonlex.String:
			b.WriteString(strconv.Quote(string(tok.Bytes)))
		case jsonlex.Number:
			b.Write(tok.Bytes)
		default:
			b.WriteString(map[jsonlex.Kind]string{jsonlex.True: "true", jsonlex.False: "false", jsonlex.Null: "null",
				jsonlex.NaN: "NaN", jsonlex.PosInf: "Infinity", jsonlex.NegInf: "-Infinity"}[tok.Kind])
		}
	}
}

// With "group": null, collectives pair by entry name. That is only worth
// a word when some rank of the step did not make the carrier's call: then
// the k-th call of two ranks may belong to different groups.
func TestTrapNamedPairingNote(t *testing.T) {
	const note = "paired by entry name"
	src := []string{"Torch.sqrt.0.forward in=1 out=nan", "Distributed.all_reduce.0.forward in=nan kw:group=null out=nan"}
	recv := []string{"Torch.sqrt.0.forward in=1 out=1", "Distributed.all_reduce.0.forward in=1 kw:group=null out=nan"}
	apart := []string{"Torch.sqrt.0.forward in=1 out=1", "Tensor.add.0.forward in=1 out=1"}
	tests := []struct {
		name  string
		ranks map[int][]string
		note  bool
	}{
		{"every rank made the call", map[int][]string{0: src, 1: recv, 2: recv, 3: recv}, false},
		{"ranks 2 and 3 did not", map[int][]string{0: src, 1: recv, 2: apart, 3: apart}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := trace1(t, writeRun(t, 0, tt.ranks))
			if v.Origin == nil || v.Origin.Op != "Torch.sqrt.0.forward" || v.Carrier == nil {
				t.Fatalf("origin %+v carrier %+v", v.Origin, v.Carrier)
			}
			has := false
			for _, r := range v.Origin.Reasons {
				has = has || strings.Contains(r, note)
			}
			if has != tt.note {
				t.Errorf("note %v, want %v: %q", has, tt.note, v.Origin.Reasons)
			}
		})
	}
}
