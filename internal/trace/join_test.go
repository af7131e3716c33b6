package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/fsjson"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/internal/synth"
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
	return copyToNodes(t, layout, node, n)
}

// copyToNodes copies each rank's folders of a dump to the node folder
// node[rank] of n, and returns the node roots.
func copyToNodes(t testing.TB, layout *dump.Layout, node map[int]int, n int) []string {
	t.Helper()
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

// normalised is a verdict as JSON with every dump root (as the JSON writes
// it) replaced by "ROOT", without the origin timeline (a join has none).
func normalised(t testing.TB, v *verdict.Verdict, roots ...string) string {
	t.Helper()
	if v != nil {
		// nor can it tell what heads for overflow: the statistics stay in
		// the nodes' dump.json files
		c := *v
		c.Ahead = nil
		v = &c
	}
	if v != nil && v.Origin != nil {
		// the one thing a join cannot give: the calls around the root op
		// lie in a dump.json on its node, and so does what they tell of a
		// value a call hid (an explanation, and the hint that replaces the
		// origin's)
		c, o := *v, *v.Origin
		o.Timeline, c.Origin = nil, &o
		c.Explanations = slices.DeleteFunc(slices.Clone(c.Explanations), func(e verdict.Explanation) bool { return e.Kind == verdict.ExplainHidden })
		c.NextSteps = slices.DeleteFunc(slices.Clone(c.NextSteps), func(s string) bool { return strings.HasPrefix(s, o.Op+": ") })
		v = &c
	}
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	sort.Slice(roots, func(i, j int) bool { return len(roots[i]) > len(roots[j]) })
	for _, r := range roots {
		abs, _ := filepath.Abs(r)
		lit := fsjson.Append(nil, abs) // as the JSON writes it
		s = strings.ReplaceAll(s, string(lit[1:len(lit)-1]), "ROOT")
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
	// what "clean" claims first, by name: every node sent its summary
	if got.Complete != want.Complete || fmt.Sprint(got.Unread) != fmt.Sprint(want.Unread) ||
		fmt.Sprint(got.NotDumped) != fmt.Sprint(want.NotDumped) || len(got.MissingNodes) != 0 {
		t.Fatalf("joined over %d nodes: complete %v, unread %+v, not dumped %v, missing nodes %+v; in one place: complete %v, unread %+v, not dumped %v",
			len(roots), got.Complete, got.Unread, got.NotDumped, got.MissingNodes, want.Complete, want.Unread, want.NotDumped)
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

// scenarioDir generates a catalogued scenario.
func scenarioDir(t *testing.T, name string) string {
	t.Helper()
	for _, sc := range synth.Scenarios() {
		if sc.Name == name {
			dir := filepath.Join(t.TempDir(), "dump")
			if _, err := synth.Generate(sc.Spec, dir); err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	t.Fatalf("no scenario %q", name)
	return ""
}

// Phase 1 (no details) gives the verdict without code, chain and tensors,
// and names the steps to summarise again; phase 2 over those steps, joined
// with phase 1, gives the single-place verdict.
func TestJoinTwoPhases(t *testing.T) {
	for _, name := range []string{"tie-pipeline-carrier", "sqrt-zero-backward", "inf-absorbed-next-step", "loss-scale-recovered"} {
		t.Run(name, func(t *testing.T) {
			dir := scenarioDir(t, name)
			want, err := Run(context.Background(), Options{Path: dir})
			if err != nil {
				t.Fatal(err)
			}
			roots := splitNodes(t, dir, 3, rand.New(rand.NewSource(3)))
			p1 := summariseNodes(t, roots, true)
			v1, err := Run(context.Background(), Options{Summaries: p1})
			if err != nil {
				t.Fatal(err)
			}
			if want.Origin == nil {
				if w, g := normalised(t, want, dir), normalised(t, v1, roots...); w != g {
					t.Fatalf("phase 1 differs from one place:\n%s", lineDiff(w, g))
				}
				return
			}
			if v1.Origin == nil || v1.Origin.Op != want.Origin.Op || !equalInts(v1.Origin.Ranks, want.Origin.Ranks) {
				t.Fatalf("phase 1 origin %+v, want %+v", v1.Origin, want.Origin)
			}
			if len(v1.Origin.Outputs) != 0 || v1.Origin.Code != nil {
				t.Errorf("phase 1 has details: %+v", v1.Origin)
			}
			if !strings.Contains(fmt.Sprint(v1.Warnings), "--until-first") {
				t.Errorf("phase 1 does not say its details are missing: %v", v1.Warnings)
			}
			steps := map[int]bool{v1.Origin.Step: true}
			for _, st := range v1.Steps {
				if st.Step > v1.Origin.Step {
					steps[st.Step] = true
					break
				}
			}
			var p2 []string
			for i, r := range roots {
				var b bytes.Buffer
				if _, err := Summarize(context.Background(), SummaryOptions{Path: r, Run: "test", Steps: steps, Node: Node{Index: i, Count: len(roots)}}, &b); err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(t.TempDir(), fmt.Sprintf("p2-node%d.jsonl", i))
				if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				p2 = append(p2, p)
			}
			got, err := Run(context.Background(), Options{Summaries: append(p1, p2...)})
			if err != nil {
				t.Fatal(err)
			}
			if w, g := normalised(t, want, dir), normalised(t, got, roots...); w != g {
				t.Fatalf("two phases differ from one place:\n%s", lineDiff(w, g))
			}
		})
	}
}

// A node summary cut short, or missing, is a warning naming its ranks and
// lowers the confidence; the verdict still comes.
func TestJoinDamagedOrMissingNode(t *testing.T) {
	dir := scenarioDir(t, "log-negative")
	want, err := Run(context.Background(), Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if want.Origin == nil || want.Origin.Confidence != "high" {
		t.Fatalf("the scenario's verdict changed: %+v", want.Origin)
	}
	roots := splitNodes(t, dir, 4, rand.New(rand.NewSource(1)))
	files := summariseNodes(t, roots, false)
	levels := map[string]int{"low": 1, "medium": 2, "high": 3}
	nodeRanks := func(i int) []int {
		l, err := dump.Discover(roots[i])
		if err != nil {
			t.Fatal(err)
		}
		set := map[int]bool{}
		for _, d := range l.Dirs {
			set[d.Rank] = true
		}
		return sortedKeys(set)
	}
	t.Run("cut", func(t *testing.T) {
		b, err := os.ReadFile(files[1])
		if err != nil {
			t.Fatal(err)
		}
		cut := filepath.Join(t.TempDir(), "node1.jsonl")
		lines := bytes.SplitAfter(b, []byte("\n"))
		if err := os.WriteFile(cut, bytes.Join(lines[:2], nil), 0o644); err != nil { // the header and one record
			t.Fatal(err)
		}
		v, err := Run(context.Background(), Options{Summaries: []string{files[0], cut, files[2], files[3]}})
		if err != nil {
			t.Fatal(err)
		}
		ranks := notation.FormatRanges(nodeRanks(1))
		if !strings.Contains(fmt.Sprint(v.Warnings), "ends before its last line") || !strings.Contains(fmt.Sprint(v.Warnings), "ranks "+ranks) {
			t.Errorf("no warning naming ranks %s: %v", ranks, v.Warnings)
		}
		if v.Origin == nil || levels[v.Origin.Confidence] >= levels[want.Origin.Confidence] {
			t.Errorf("confidence %v, want below %s", v.Origin, want.Origin.Confidence)
		}
	})
	t.Run("missing", func(t *testing.T) {
		v, err := Run(context.Background(), Options{Summaries: []string{files[0], files[1], files[3]}})
		if err != nil {
			t.Fatal(err)
		}
		ranks := notation.FormatRanges(nodeRanks(2))
		if !strings.Contains(fmt.Sprint(v.Warnings), "no summary from node(s) 2 of 4") || !strings.Contains(fmt.Sprint(v.Warnings), ranks) {
			t.Errorf("no warning naming node 2 and ranks %s: %v", ranks, v.Warnings)
		}
		if v.Origin == nil || levels[v.Origin.Confidence] >= levels[want.Origin.Confidence] {
			t.Errorf("confidence %v, want below %s", v.Origin, want.Origin.Confidence)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "node9.jsonl")
		if err := os.WriteFile(bad, []byte("\x00\x01not json"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Run(context.Background(), Options{Summaries: []string{files[0], bad}})
		if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "offset 0") {
			t.Errorf("error %v, want one naming %s at offset 0", err, bad)
		}
	})
}

// Summaries of different runs or rules, or the same rank-step twice, are
// refused.
func TestJoinRefuses(t *testing.T) {
	dir := scenarioDir(t, "tie-pipeline-carrier")
	roots := splitNodes(t, dir, 2, rand.New(rand.NewSource(1)))
	files := summariseNodes(t, roots, false)
	write := func(opt SummaryOptions) string {
		var b bytes.Buffer
		if _, err := Summarize(context.Background(), opt, &b); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "other.jsonl")
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rules := []policy.Rule{{Op: "Torch.zzz", Side: "output", Slot: "*", Values: "nan", Reason: "test"}}
	for _, c := range []struct {
		name  string
		files []string
		rules []policy.Rule
		want  string
	}{
		{"other run", []string{files[0], write(SummaryOptions{Path: roots[1], Run: "another"})}, nil, "different runs"},
		{"other rules", []string{files[0], write(SummaryOptions{Path: roots[1], Run: "test", Rules: rules})}, nil, "other rules"},
		{"join with rules", files, rules, "pass --rules to summarize"},
		{"twice", []string{files[0], files[1], write(SummaryOptions{Path: roots[1], Run: "test"})}, nil, "give each rank-step once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(context.Background(), Options{Summaries: c.files, Rules: c.rules})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestNodeFromEnv(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want Node
		job  Job
	}{
		{map[string]string{"TORCHELASTIC_RUN_ID": "none", "GROUP_RANK": "3", "GROUP_WORLD_SIZE": "16", "LOCAL_WORLD_SIZE": "1", "RANK": "3", "WORLD_SIZE": "16"}, Node{Index: 3, Count: 16, Launcher: "torchrun"}, Job{}},
		{map[string]string{"TORCHELASTIC_RUN_ID": "j7", "GROUP_RANK": "0", "LOCAL_WORLD_SIZE": "4", "RANK": "2", "WORLD_SIZE": "4"}, Node{Index: 2, Count: 4, Launcher: "torchrun"}, Job{ID: "j7", From: "torchrun"}},
		{map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_JOB_ID": "991"}, Node{Index: 5, Count: 8, Launcher: "slurm"}, Job{ID: "991", From: "slurm"}},
		{map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_JOBID": "17"}, Node{Index: 1, Count: 2, Launcher: "slurm"}, Job{ID: "17", From: "slurm"}},
		{map[string]string{"JOB_COMPLETION_INDEX": "7"}, Node{Index: 7, Launcher: "kubernetes"}, Job{}},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_MCA_orte_ess_jobid": "3190358017"}, Node{Index: 1, Count: 2, Launcher: "mpi"}, Job{ID: "3190358017", From: "mpi"}},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "PMIX_NAMESPACE": "prterun-h-4242@1", "OMPI_MCA_orte_ess_jobid": "x"}, Node{Index: 1, Count: 2, Launcher: "mpi"}, Job{ID: "prterun-h-4242@1", From: "mpi"}},
		{map[string]string{"PMI_RANK": "4", "PMI_SIZE": "6"}, Node{Index: 4, Count: 6, Launcher: "mpi"}, Job{}},
		{map[string]string{}, Node{Index: -1}, Job{}},
	} {
		n, job, err := NodeFromEnv(func(k string) string { return c.env[k] })
		if n != c.want || job != c.job || err != nil {
			t.Errorf("%v: got %+v %+v (%v), want %+v %+v", c.env, n, job, err, c.want, c.job)
		}
		if job.Shared() != (c.job.ID != "") {
			t.Errorf("%v: job %+v shared %v", c.env, job, job.Shared())
		}
	}
	if m := MadeJob(); m.Shared() || len(m.ID) != 16 || m == MadeJob() {
		t.Errorf("made job %+v: want 16 hex digits of its own, not shared", m)
	}
}

// A summary is a small fraction of the dump it summarises: under 1 % on a
// run whose dump.json files have the size of real statistics dumps.
func TestSummaryIsSmall(t *testing.T) {
	spec, err := synth.Fit(synth.Spec{Name: "sized", Ranks: 4, Steps: []int{0, 1, 2, 3}, Model: synth.Dense, Hidden: 1024, Batch: 1, Seq: 512,
		Level: "L1", TargetFileBytes: 8 << 20, Fault: &synth.Fault{Kind: synth.LogNegative, Step: 2, Ranks: []int{1}}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "dump")
	if _, err := synth.Generate(spec, dir); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	st, err := Summarize(context.Background(), SummaryOptions{Path: dir}, &b)
	if err != nil {
		t.Fatal(err)
	}
	if st.Written != int64(b.Len()) || st.DumpBytes < 4*(4<<20) {
		t.Fatalf("stats %+v for %d bytes written", st, b.Len())
	}
	if share := float64(st.Written) / float64(st.DumpBytes); share >= 0.01 {
		t.Errorf("summary %d bytes for %d dump bytes (%.2f%%): want under 1%%", st.Written, st.DumpBytes, 100*share)
	}
}

// A node that sees an anomaly last leaves a mark in the shared folder; a
// node summarising later stops after the step it names, and the join is
// still the single-place verdict.
func TestSummarizeStopsAtSharedMark(t *testing.T) {
	spec := synth.Spec{Name: "mark", Ranks: 4, Steps: []int{0, 1, 2, 3, 4, 5, 6, 7}, Model: synth.Dense, Level: "L1",
		Fault: &synth.Fault{Kind: synth.LogNegative, Step: 2, Ranks: []int{1}}, Seed: 1}
	dir := filepath.Join(t.TempDir(), "dump")
	if _, err := synth.Generate(spec, dir); err != nil {
		t.Fatal(err)
	}
	want, err := Run(context.Background(), Options{Path: dir})
	if err != nil || want.Origin == nil || want.Origin.Step != 2 {
		t.Fatalf("the run's verdict: %v %+v", err, want)
	}
	roots := splitNodes(t, dir, 2, rand.New(rand.NewSource(1)))
	shared := t.TempDir()
	files, stats := summariseShared(t, roots, shared, Job{ID: "7", From: "slurm"})
	if stats[0].StoppedAfter == nil || *stats[0].StoppedAfter != 3 {
		t.Fatalf("node 0 stopped after %v, want 3", stats[0].StoppedAfter)
	}
	if marks, _ := filepath.Glob(filepath.Join(shared, ".nanhunt-lasting-*")); len(marks) == 0 {
		t.Fatal("node 0 left no mark")
	}
	// node 1 stops at the mark, or at its own lasting anomaly: never later
	if stats[1].StoppedAfter == nil || *stats[1].StoppedAfter > 3 || slices.Max(stats[1].Steps) > 3 {
		t.Errorf("node 1 read steps %v, stopped after %v: want nothing after step 3", stats[1].Steps, stats[1].StoppedAfter)
	}
	got, err := Run(context.Background(), Options{Summaries: files})
	if err != nil {
		t.Fatal(err)
	}
	if w, g := normalised(t, want, dir), normalised(t, got, roots...); w != g {
		t.Fatalf("joined verdict differs:\n%s", lineDiff(w, g))
	}
}

// A mark of another node of the same job bounds what a node reads, even
// when its own ranks show nothing; a mark of the same run that another job
// left is not followed and is removed, and nothing else is.
func TestSummarizeHonoursMark(t *testing.T) {
	spec := synth.Spec{Name: "clean", Ranks: 2, Steps: []int{0, 1, 2, 3, 4, 5}, Model: synth.Dense, Level: "L1", Seed: 1}
	dir := filepath.Join(t.TempDir(), "dump")
	if _, err := synth.Generate(spec, dir); err != nil {
		t.Fatal(err)
	}
	job := Job{ID: "991", From: "slurm"}
	for _, c := range []struct {
		name       string
		marks      []markBoard // who left marks, each after step 2
		own        Job
		steps      []int
		stoppedBy  string
		removed    int
		marksAfter int
	}{
		{"same job", []markBoard{{run: "test", job: job}}, job, []int{0, 1, 2}, "node 5", 0, 1},
		{"another job", []markBoard{{run: "test", job: Job{ID: "990", From: "slurm"}}}, job, []int{0, 1, 2, 3, 4, 5}, "", 1, 0},
		{"another run", []markBoard{{run: "other run", job: job}}, job, []int{0, 1, 2, 3, 4, 5}, "", 0, 1},
		{"no shared job", []markBoard{{run: "test", job: job}}, Job{}, []int{0, 1, 2, 3, 4, 5}, "", 1, 0},
		{"both", []markBoard{{run: "test", job: Job{ID: "990", From: "flag"}}, {run: "test", job: job}}, job, []int{0, 1, 2}, "node 5", 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			shared := t.TempDir()
			other := filepath.Join(shared, ".nanhunt-lasting-not-a-mark")
			if err := os.WriteFile(other, []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, m := range c.marks {
				m.dir = shared
				m.leave("", 2, Node{Index: 5})
			}
			var b bytes.Buffer
			st, err := Summarize(context.Background(), SummaryOptions{Path: dir, Run: "test", Shared: shared, Node: Node{Index: 0}, Job: c.own}, &b)
			if err != nil {
				t.Fatal(err)
			}
			if !equalInts(st.Steps, c.steps) || (c.stoppedBy == "") != (st.StoppedAfter == nil) || !strings.Contains(st.Why, c.stoppedBy) {
				t.Errorf("read steps %v, stopped after %v (%s): want %v, stopped by %q", st.Steps, st.StoppedAfter, st.Why, c.steps, c.stoppedBy)
			}
			marks, _ := filepath.Glob(filepath.Join(shared, ".nanhunt-lasting-*.json"))
			if len(st.RemovedMarks) != c.removed || len(marks) != c.marksAfter {
				t.Errorf("removed %v, left %v: want %d removed, %d left", st.RemovedMarks, marks, c.removed, c.marksAfter)
			}
			if _, err := os.Stat(other); err != nil {
				t.Errorf("a file that is no mark was removed: %v", err)
			}
			if st.MarksOff != !c.own.Shared() || (!c.own.Shared() && st.Job.From != JobMade) {
				t.Errorf("marks off %v, job %+v, for own job %+v", st.MarksOff, st.Job, c.own)
			}
		})
	}
}

// A summary record is bounded whatever the dump: a rank-step of 100,000
// calls, every one of them a NaN birth or a collective of its own group,
// gives a record of a few hundred kB.
func TestSummaryRecordBounded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dump", "step0", "rank0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("{\n \"task\": \"statistics\",\n \"level\": \"L1\",\n \"dump_data_dir\": null,\n \"data\": {\n")
	const n = 50_000
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `  "Torch.exp.%d.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 1, "Min": 0, "requires_grad": false}], "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": NaN, "Min": NaN, "requires_grad": false}]},`+"\n", i)
		fmt.Fprintf(&b, `  "Distributed.all_reduce.%d.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": NaN, "Min": NaN}], "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "g%d"}}, "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": NaN, "Min": NaN}]}`, i, i)
	}
	b.WriteString("\n }\n}\n")
	if err := os.WriteFile(filepath.Join(dir, "dump.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	st, err := Summarize(context.Background(), SummaryOptions{Path: filepath.Dir(filepath.Dir(dir))}, &out)
	if err != nil {
		t.Fatal(err)
	}
	var longest int
	for _, l := range bytes.Split(out.Bytes(), []byte("\n")) {
		longest = max(longest, len(l))
	}
	t.Logf("dump.json %d bytes, record %d bytes", b.Len(), longest)
	if st.Records != 1 || longest > 512<<10 {
		t.Errorf("%d records, the longest line %d bytes, for a %d-byte dump.json: want one record under 512 kB", st.Records, longest, b.Len())
	}
}
