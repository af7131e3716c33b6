package trace

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/ahead"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// watchedDoc writes a json.dump(indent=1) dump.json of n calls whose
// tensors hold values near their dtype's limit and calls of the exp
// family, among others; some calls are larger than the search's window,
// so that entries lie across its edges in every way.
func watchedDoc(rng *rand.Rand, n int) string {
	var sb strings.Builder
	sb.WriteString("{\n \"task\": \"statistics\",\n \"level\": \"L1\",\n \"framework\": \"pytorch\",\n \"dump_data_dir\": null,\n \"data\": {\n")
	ops := []string{"Torch.exp", "Torch.mul", "Tensor.exp_", "Torch.cosh", "Functional.linear", "Torch.sinh"}
	values := []string{"44000.0", "-61000.0", "1.0", "10.9", "0.25", "1024.0", "3.0e+38", "-2.9e+38", "12.0", "-0.5"}
	for i := range n {
		if i > 0 {
			sb.WriteString(",\n")
		}
		fmt.Fprintf(&sb, "  %q: {\n   \"input_args\": [\n", fmt.Sprintf("%s.%d.forward", ops[rng.IntN(len(ops))], i))
		tensors := 1 + rng.IntN(3)
		if rng.IntN(40) == 0 {
			tensors = 1000 + rng.IntN(1000) // larger than a window
		}
		for k := range tensors {
			if k > 0 {
				sb.WriteString(",\n")
			}
			dtype := []string{"torch.float16", "torch.bfloat16", "torch.float32"}[rng.IntN(3)]
			fmt.Fprintf(&sb, "    {\n     \"type\": \"torch.Tensor\",\n     \"dtype\": %q,\n     \"shape\": [\n      4,\n      8\n     ],\n", dtype)
			fmt.Fprintf(&sb, "     \"Max\": %s,\n     \"Min\": %s,\n     \"Mean\": 0.5,\n     \"Norm\": 3.0,\n     \"requires_grad\": false\n    }",
				values[rng.IntN(len(values))], values[rng.IntN(len(values))])
		}
		sb.WriteString("\n   ],\n   \"input_kwargs\": {},\n   \"output\": [\n    {\n     \"type\": \"torch.Tensor\",\n     \"dtype\": \"torch.float16\",\n")
		fmt.Fprintf(&sb, "     \"shape\": [\n      4\n     ],\n     \"Max\": %s,\n     \"Min\": 0.0,\n     \"Mean\": 0.5,\n     \"Norm\": 3.0,\n     \"requires_grad\": false\n    }\n   ]\n  }", values[rng.IntN(len(values))])
	}
	sb.WriteString("\n }\n}")
	return sb.String()
}

// wholeParseWatched is the rule written plainly: every entry parsed, every
// value of each observed, the watched ones kept (wholeParse), of a
// document the reader reads whole.
func wholeParseWatched(t *testing.T, file string, m *policy.Matcher) []ahead.Value {
	t.Helper()
	out, ok := wholeParse(file, m)
	if !ok {
		t.Fatalf("%s: the reader cannot read it whole", file)
	}
	return out
}

// The search for watched values reads a file window by window; what it
// finds is what parsing the whole file finds, whether an entry lies inside
// a window, across an edge, or spans several.
func TestWatchedValuesAcrossWindows(t *testing.T) {
	pol, err := policy.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	m := pol.Matcher()
	rng := rand.New(rand.NewPCG(5, 9))
	total := 0
	for round := range 3 {
		doc := watchedDoc(rng, 800+rng.IntN(800))
		if len(doc) < 3*aheadWindow {
			t.Fatalf("round %d: the document is %d bytes, want several windows of %d", round, len(doc), aheadWindow)
		}
		file := filepath.Join(t.TempDir(), "dump.json")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := watchedValues(context.Background(), file, m)
		if err != nil {
			t.Fatal(err)
		}
		want := wholeParseWatched(t, file, m)
		key := func(v ahead.Value) string { return fmt.Sprintf("%s %s %s %g", v.Op, v.Tensor, v.Stat, v.Value) }
		gk, wk := make([]string, len(got)), make([]string, len(want))
		for i, v := range got {
			gk[i] = key(v)
		}
		for i, v := range want {
			wk[i] = key(v)
		}
		slices.Sort(gk)
		slices.Sort(wk)
		if !slices.Equal(gk, wk) {
			t.Fatalf("round %d: %d watched values, the whole parse %d; only the search: %q; only the whole parse: %q",
				round, len(gk), len(wk), firstOnly(gk, wk, 5), firstOnly(wk, gk, 5))
		}
		total += len(want)
	}
	if total < 1000 {
		t.Errorf("%d watched values in all: the documents do not exercise the search", total)
	}
}

// firstOnly is up to n of the strings of a (sorted) that b (sorted) lacks.
func firstOnly(a, b []string, n int) []string {
	var out []string
	for _, s := range a {
		if _, found := slices.BinarySearch(b, s); !found && len(out) < n {
			out = append(out, s)
		}
	}
	return out
}

// edgeDoc is a filler call (with a value near float16's limit first,
// padded by pad bytes), then a call of the exp family whose input is far
// from its limit (the exp rule watches nothing there; it has inputs input
// tensors) but whose output holds a value near float16's limit.
func edgeDoc(pad, fillers, inputs int) string {
	var sb strings.Builder
	sb.WriteString("{\n \"task\": \"statistics\",\n \"level\": \"L1\",\n \"framework\": \"pytorch\",\n \"dump_data_dir\": null,\n \"data\": {\n")
	tensor := func(max string, extra string) string {
		return "    {\n     \"type\": \"torch.Tensor\",\n     \"dtype\": \"torch.float16\",\n     \"shape\": [\n      4\n     ]," + extra +
			"\n     \"Max\": " + max + ",\n     \"Min\": 0.0,\n     \"Mean\": 0.5,\n     \"Norm\": 3.0,\n     \"requires_grad\": false\n    }"
	}
	sb.WriteString("  \"Functional.linear.0.forward\": {\n   \"input_args\": [\n" + tensor("60000.0", ""))
	for range fillers {
		sb.WriteString(",\n" + tensor("2.0", ""))
	}
	sb.WriteString(",\n" + tensor("1.0", "\n     \"data_name\": \""+strings.Repeat("x", pad)+"\","))
	sb.WriteString("\n   ],\n   \"input_kwargs\": {},\n   \"output\": []\n  },\n")
	sb.WriteString("  \"Torch.exp.1.forward\": {\n   \"input_args\": [\n" + tensor("1.0", ""))
	for range inputs - 1 {
		sb.WriteString(",\n" + tensor("0.5", ""))
	}
	sb.WriteString("\n   ],\n   \"input_kwargs\": {},\n   \"output\": [\n" + tensor("44000.0", "") + "\n   ]\n  }\n }\n}")
	return sb.String()
}

// A large value in the next window of the search than its call's name is
// read for: whether the call is one of the exp family that the exp rule
// does not watch, its name in the window before (once handed over as
// such, the call was never read for the value), or its name lies before
// the window holding the value, after another call's large value (the
// value was put down to that other call).
func TestWatchedValuesAcrossAnEdge(t *testing.T) {
	pol, err := policy.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	m := pol.Matcher()
	file := filepath.Join(t.TempDir(), "dump.json")
	edge := int64(aheadWindow + aheadEdge) // the first window judges the bytes before it
	for _, inputs := range []int{1, 8} {
		one := len(edgeDoc(0, 1, inputs)) - len(edgeDoc(0, 0, inputs))
		fillers := (aheadWindow - 3000) / one
		base := edgeDoc(0, fillers, inputs)
		name0 := int64(strings.Index(base, `"Torch.exp.1.forward"`))
		big0 := int64(strings.Index(base, "44000.0"))
		var want []ahead.Value
		crossed := 0
		step := 3 + inputs // the documents that cross are some hundred bytes apart (one input) or more
		for pad := max(0, int(edge-big0)-64); pad < int(edge-name0)+64; pad += step {
			doc := edgeDoc(pad, fillers, inputs)
			if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			if want == nil {
				if want = wholeParseWatched(t, file, m); len(want) != 2 {
					t.Fatalf("the whole parse watches %+v, want the two large values", want)
				}
			}
			got, err := watchedValues(context.Background(), file, m)
			if err != nil {
				t.Fatal(err)
			}
			name, big := name0+int64(pad), big0+int64(pad)
			if len(got) != 2 || got[0].Key != want[0].Key || got[1].Key != want[1].Key {
				t.Fatalf("%d inputs, name at byte %d, the value at %d, first window's edge %d: watched %+v, want %+v", inputs, name, big, edge, got, want)
			}
			if name < edge && big >= edge {
				crossed++
			}
		}
		if crossed == 0 {
			t.Errorf("%d inputs: no document puts the name and the value in different windows", inputs)
		}
	}
}

// FuzzWatchedValues holds the window-by-window search for watched values
// to the whole parse (wholeParseWatched) on any document the reader reads
// whole, through windows of 1 kB, so that entries cross their edges.
func FuzzWatchedValues(f *testing.F) {
	defer func(w int) { aheadWindowFor = w }(aheadWindowFor)
	aheadWindowFor = 1024
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{2, 5} {
		if doc := watchedDoc(rng, n); len(doc) < 8<<10 {
			f.Add(doc)
		}
	}
	f.Add(edgeDoc(40, 3, 1))
	f.Add(edgeDoc(300, 2, 8))
	pol, err := policy.New(nil)
	if err != nil {
		f.Fatal(err)
	}
	m := pol.Matcher()
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, doc string) {
		file := filepath.Join(dir, "dump.json")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		want, ok := wholeParse(file, m)
		got, err := watchedValues(context.Background(), file, m)
		if !ok {
			return // damaged: the search may say anything but must not fail to return
		}
		if err != nil {
			t.Fatalf("%v on a document the reader reads whole", err)
		}
		key := func(vs []ahead.Value) []string {
			var out []string
			for _, v := range vs {
				out = append(out, fmt.Sprintf("%s %s %s %g", v.Op, v.Tensor, v.Stat, v.Value))
			}
			slices.Sort(out)
			return out
		}
		if g, w := key(got), key(want); !slices.Equal(g, w) {
			t.Fatalf("watched %q, the whole parse %q", g, w)
		}
	})
}

// wholeParse are the watched values of every entry of a document, parsed
// whole; false when the reader cannot read it whole.
func wholeParse(file string, m *policy.Matcher) ([]ahead.Value, bool) {
	f, err := os.Open(file)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	rd := dump.NewReader(f, dump.ReaderOptions{Details: true})
	var out []ahead.Value
	for rd.Next() {
		e := rd.Entry()
		for _, v := range ahead.Observe(e, m.AheadCounts(e), nil) {
			if v.Watched() {
				out = append(out, v)
			}
		}
	}
	return out, rd.Err() == nil
}
