package reference

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// pyJSON re-indents compact JSON the way Python's json.dump(indent=1)
// writes it (bare NaN/Infinity tokens kept).
func pyJSON(tb testing.TB, compact string) string {
	tb.Helper()
	n, err := jsonoracle.Decode([]byte(compact))
	if err != nil {
		tb.Fatalf("test JSON does not decode: %v\n%s", err, compact)
	}
	var b strings.Builder
	writeNode(&b, n, 0)
	return b.String()
}

func writeNode(b *strings.Builder, n *jsonoracle.Node, depth int) {
	ind := func(d int) string { return strings.Repeat(" ", d) }
	switch n.Kind {
	case jsonoracle.Null:
		b.WriteString("null")
	case jsonoracle.Bool:
		fmt.Fprint(b, n.Bool)
	case jsonoracle.Number:
		b.WriteString(n.Literal)
	case jsonoracle.String:
		q, _ := json.Marshal(n.Literal)
		b.Write(q)
	case jsonoracle.NaN:
		b.WriteString("NaN")
	case jsonoracle.PosInf:
		b.WriteString("Infinity")
	case jsonoracle.NegInf:
		b.WriteString("-Infinity")
	case jsonoracle.Array:
		if len(n.Elems) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range n.Elems {
			b.WriteString(ind(depth + 1))
			writeNode(b, e, depth+1)
			if i < len(n.Elems)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(ind(depth) + "]")
	case jsonoracle.Object:
		if len(n.Members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range n.Members {
			q, _ := json.Marshal(m.Name)
			b.WriteString(ind(depth + 1))
			b.Write(q)
			b.WriteString(": ")
			writeNode(b, m.Value, depth+1)
			if i < len(n.Members)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(ind(depth) + "}")
	}
}

// Statistics spellings used by the tests.
const (
	fin  = "1.0"
	nan  = "NaN"
	pinf = "Infinity"
	ninf = "-Infinity"
)

// T is a float32 tensor with these Max and Min (any JSON text).
func T(max, min string) string {
	return fmt.Sprintf(`{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": %s, "Min": %s, "Mean": 0.5, "Norm": 1.0, "requires_grad": false}`, max, min)
}

// TG is T with requires_grad true (a weight).
func TG(max, min string) string {
	return strings.Replace(T(max, min), `"requires_grad": false`, `"requires_grad": true`, 1)
}

// ok is a finite tensor.
var ok = T("1.5", "-1.5")

// fwd is a forward API entry body.
func fwd(ins []string, outs ...string) string {
	return fmt.Sprintf(`{"input_args": [%s], "input_kwargs": {}, "output": [%s]}`, strings.Join(ins, ", "), strings.Join(outs, ", "))
}

// fwdKw is a forward entry with keyword arguments (a JSON object body).
func fwdKw(ins []string, kwargs string, outs ...string) string {
	return fmt.Sprintf(`{"input_args": [%s], "input_kwargs": {%s}, "output": [%s]}`, strings.Join(ins, ", "), kwargs, strings.Join(outs, ", "))
}

// bwd is a backward entry body.
func bwd(ins []string, outs ...string) string {
	return fmt.Sprintf(`{"input": [%s], "output": [%s]}`, strings.Join(ins, ", "), strings.Join(outs, ", "))
}

func in(xs ...string) []string { return xs }

// E is one dump.json entry.
func E(name, body string) string { return fmt.Sprintf("%q: %s", name, body) }

// group is a recorded ProcessGroup argument.
func group(id string, ranks ...int) string {
	return fmt.Sprintf(`{"type": "torch.ProcessGroup", "group_ranks": [%s], "group_id": %q}`, joinInts(ranks), id)
}

// allReduce is an all_reduce entry (default group when g is "").
func allReduce(before, after, g string) string {
	if g == "" {
		return fwd(in(before), after)
	}
	return fwdKw(in(before), `"group": `+g, after, g)
}

// rankFiles is what one rank folder holds.
type rankFiles struct {
	entries   []string
	stack     string // compact JSON, "" for none
	construct string // compact JSON, "" for none
	raw       *string
	noDump    bool
}

// run is step -> rank -> files.
type run map[int]map[int]rankFiles

// oneStep is a run of one step (step 0) with these ranks' entries.
func oneStep(ranks map[int][]string) run {
	r := run{0: {}}
	for rank, es := range ranks {
		r[0][rank] = rankFiles{entries: es}
	}
	return r
}

func dumpText(tb testing.TB, entries []string) string {
	return pyJSON(tb, `{"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {`+strings.Join(entries, ", ")+`}}`)
}

// write lays the run out as dump_path/stepN/rankM and returns dump_path.
func (r run) write(tb testing.TB) string {
	tb.Helper()
	root := tb.TempDir()
	for step, ranks := range r {
		for rank, f := range ranks {
			dir := filepath.Join(root, fmt.Sprintf("step%d", step), fmt.Sprintf("rank%d", rank))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				tb.Fatal(err)
			}
			put := func(name, text string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					tb.Fatal(err)
				}
			}
			switch {
			case f.noDump:
			case f.raw != nil:
				put("dump.json", *f.raw)
			default:
				put("dump.json", dumpText(tb, f.entries))
			}
			if f.stack != "" {
				put("stack.json", pyJSON(tb, f.stack))
			}
			if f.construct != "" {
				put("construct.json", pyJSON(tb, f.construct))
			}
		}
	}
	return root
}

// stackOf is a stack.json v2 with one stack per entry name.
func stackOf(stacks map[string][]string) string {
	var parts []string
	i := 0
	names := make([]string, 0, len(stacks))
	for n := range stacks {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		q, _ := json.Marshal(stacks[n])
		parts = append(parts, fmt.Sprintf(`"%d": [[%q], %s]`, i, n, q))
		i++
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// frameLine is one stack.json line.
func frameLine(file string, line int, fn, code string) string {
	return fmt.Sprintf("File %s, line %d, in %s, \n %s", file, line, fn, code)
}

// analyse runs the reference on a run. Under TestDifferentialRuleCases it
// also holds the fast path to the reference's verdict.
func analyse(t *testing.T, r run, opt Options) *Verdict {
	t.Helper()
	return analyseDir(t, r.write(t), opt)
}

// analyseDir is analyse on a dump already written (and changed) in dir.
func analyseDir(t *testing.T, dir string, opt Options) *Verdict {
	t.Helper()
	v, err := Analyse(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(t.Name(), ruleCasesTest+"/") {
		compareFastWith(t, t.Name(), dir, v, opt)
	}
	return v
}

// expect compares one field.
func expect[T comparable](t *testing.T, field string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %v, want %v", field, got, want)
	}
}

func expectInts(t *testing.T, field string, got, want []int) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %v, want %v", field, got, want)
	}
}

// origin returns the origin or fails.
func origin(t *testing.T, v *Verdict) *Origin {
	t.Helper()
	if !v.Anomaly || v.Origin == nil {
		t.Fatalf("no anomaly found: %s", v)
	}
	return v.Origin
}

// role returns the row of a rank at a step.
func role(t *testing.T, v *Verdict, step, rank int) RankRole {
	t.Helper()
	for _, s := range v.Steps {
		if s.Step != step {
			continue
		}
		for _, r := range s.Anomalous {
			if r.Rank == rank {
				return r
			}
		}
	}
	t.Fatalf("no row for rank %d at step %d: %+v", rank, step, v.Steps)
	return RankRole{}
}

func expectClean(t *testing.T, v *Verdict) {
	t.Helper()
	if v.Anomaly {
		t.Errorf("want no anomaly, got %s", v)
	}
}

func expectHop(t *testing.T, field string, got *Hop, want Hop) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: got none, want %s", field, fmtHop(&want))
		return
	}
	if !hopEqual(*got, want) {
		t.Errorf("%s: got %s, want %s", field, fmtHop(got), fmtHop(&want))
	}
}
