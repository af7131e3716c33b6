package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/synth"
	"github.com/nanhunt/nanhunt/verdict"
)

// splitNodes moves the rank folders of the dump at root into n "node"
// folders (node0/…, node1/…), each rank to one node, the way a cluster
// leaves them: every rank's steps on the node that ran it. Files beside
// the step folders go to every node. It returns the node roots.
func splitNodes(t testing.TB, root string, n int, rng *rand.Rand) []string {
	t.Helper()
	layout, err := dump.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	node := map[int]int{}
	var ranks []int
	for _, d := range layout.Dirs {
		if _, ok := node[d.Rank]; !ok {
			ranks = append(ranks, d.Rank)
			node[d.Rank] = -1
		}
	}
	sort.Ints(ranks)
	n = min(n, len(ranks))
	perm := rng.Perm(len(ranks))
	for i, p := range perm {
		node[ranks[p]] = i % n // every node gets a rank
	}
	base := filepath.Join(t.TempDir(), "nodes")
	roots := make([]string, n)
	for i := range roots {
		roots[i] = filepath.Join(base, "node"+strconv.Itoa(i), "dump")
	}
	for _, d := range layout.Dirs {
		rel, err := filepath.Rel(layout.Root, d.Dir)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(roots[node[d.Rank]], rel)
		if err := copyDir(d.Dir, dst); err != nil {
			t.Fatal(err)
		}
	}
	return roots
}

func copyDir(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, fi.Mode().Perm())
	})
}

// summariseNodes writes one summary per node root and returns their paths.
func summariseNodes(t testing.TB, roots []string, untilFirst bool) []string {
	t.Helper()
	var out []string
	for i, r := range roots {
		p := filepath.Join(filepath.Dir(filepath.Dir(r)), "summaries", fmt.Sprintf("node%d.jsonl", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := Summarize(context.Background(), SummaryOptions{Path: r, Run: "test", Node: Node{Index: i, Count: len(roots)}, UntilFirst: untilFirst}, &b); err != nil {
			t.Fatalf("summarize %s: %v", r, err)
		}
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// normalised is a verdict as JSON with every dump root replaced by "ROOT".
func normalised(t testing.TB, v *verdict.Verdict, roots ...string) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	sort.Slice(roots, func(i, j int) bool { return len(roots[i]) > len(roots[j]) })
	for _, r := range roots {
		abs, _ := filepath.Abs(r)
		s = strings.ReplaceAll(s, abs, "ROOT")
	}
	return s
}

// checkJoin: summarise-then-join gives the single-place verdict, every
// field, for the dump at dir split over n nodes.
func checkJoin(t *testing.T, dir string, n int, seed int64) {
	t.Helper()
	want, werr := Run(context.Background(), Options{Path: dir})
	rng := rand.New(rand.NewSource(seed))
	roots := splitNodes(t, dir, n, rng)
	files := summariseNodes(t, roots, false)
	got, gerr := Run(context.Background(), Options{Summaries: files})
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("in one place: error %v; joined: error %v", werr, gerr)
	}
	if werr != nil {
		return
	}
	w := normalised(t, want, dir)
	g := normalised(t, got, roots...)
	if w != g {
		t.Fatalf("joined verdict over %d nodes differs from the verdict in one place:\n%s", len(roots), lineDiff(w, g))
	}
}

// lineDiff shows the first lines where two texts differ.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(al), len(bl)) && len(out) < 20; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("line %d:\n  one place: %s\n  joined:    %s", i+1, x, y))
		}
	}
	return strings.Join(out, "\n")
}

// Every generated scenario, split at random over 2 to 16 node folders.
func TestJoinMatchesOnePlaceScenarios(t *testing.T) {
	for i, sc := range synth.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "dump")
			if _, err := synth.Generate(sc.Spec, dir); err != nil {
				t.Fatal(err)
			}
			checkJoin(t, dir, 2+i%15, int64(i))
		})
	}
}

// Randomized runs (world sizes, parallelism, faults, damage), each split
// over a random number of nodes.
func TestJoinMatchesOnePlaceRandom(t *testing.T) {
	runs := 30
	if s := os.Getenv("NANHUNT_JOIN_RUNS"); s != "" {
		runs, _ = strconv.Atoi(s)
	}
	for seed := int64(1); seed <= int64(runs); seed++ {
		t.Run(strconv.FormatInt(seed, 10), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "dump")
			if _, err := synth.Generate(synth.Random(seed), dir); err != nil {
				t.Fatal(err)
			}
			checkJoin(t, dir, 2+int(seed*7%15), seed)
		})
	}
}

// The real msprobe dumps: the shared fixtures (written by msprobe during
// real 4-rank training with a NaN injected, and msprobe's own GPU, NPU and
// MindSpore dumps) and the real runs of testdata/realruns, split over
// node folders.
func TestJoinMatchesOnePlaceReal(t *testing.T) {
	var dirs []string
	gen, _ := filepath.Glob(filepath.Join(fixtures(t), "msprobe-generated", "*", "ground_truth.json"))
	if len(gen) == 0 {
		t.Fatal("no msprobe-generated fixture")
	}
	for _, g := range gen {
		for _, level := range []string{"L1", "mix", "tensor", "msprobe-overflow-check"} {
			if _, err := os.Stat(filepath.Join(filepath.Dir(g), level)); err == nil {
				dirs = append(dirs, filepath.Join(filepath.Dir(g), level))
			}
		}
	}
	real, _ := filepath.Glob(filepath.Join(fixtures(t), "msprobe-real", "*"))
	for _, d := range real {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
		}
	}
	for _, name := range realruns.Scenarios() {
		truth := realruns.Truth(t, name)
		for _, level := range truth.Levels {
			dirs = append(dirs, filepath.Join(realruns.Dir(t, name), level))
		}
	}
	for i, d := range dirs {
		name := strings.TrimPrefix(d, filepath.Dir(filepath.Dir(d))+string(filepath.Separator))
		if _, err := dump.Discover(d); err != nil {
			continue // a folder of configs beside the dumps
		}
		t.Run(name, func(t *testing.T) {
			checkJoin(t, d, 2+i%3, int64(i))
		})
	}
}
