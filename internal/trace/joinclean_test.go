package trace

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/report"
	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/verdict"
)

// smallRun generates a dense run of four ranks and steps 0-3, with the
// fault (nil: clean); denseRun one of steps 0 to last.
func smallRun(t testing.TB, fault *synth.Fault) string { return denseRun(t, 3, fault) }

func denseRun(t testing.TB, last int, fault *synth.Fault) string {
	t.Helper()
	var steps []int
	for s := range last + 1 {
		steps = append(steps, s)
	}
	spec := synth.Spec{Name: "small", Ranks: 4, Steps: steps, Model: synth.Dense, Level: "L1", Fault: fault, Seed: 3}
	dir := filepath.Join(t.TempDir(), "dump")
	if _, err := synth.Generate(spec, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// summariseShared summarises each node root as node i of them, run "test"
// of the job, with the marks in shared; it returns the summaries' paths
// and what each node did.
func summariseShared(t *testing.T, roots []string, shared string, job Job) ([]string, []SummaryStats) {
	t.Helper()
	var files []string
	var stats []SummaryStats
	for i, r := range roots {
		var b bytes.Buffer
		st, err := Summarize(context.Background(), SummaryOptions{Path: r, Run: "test", Shared: shared, Node: Node{Index: i, Count: len(roots)}, Job: job}, &b)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), fmt.Sprintf("node%d.jsonl", i))
		writeTestFile(t, p, b.String())
		files, stats = append(files, p), append(stats, st)
	}
	return files, stats
}

// logNegative is a NaN born on rank 1 at step 2 of smallRun.
var logNegative = &synth.Fault{Kind: synth.LogNegative, Step: 2, Ranks: []int{1}}

// rankDir is the folder of one rank-step of a dump, rankFile one of its files.
func rankDir(root string, step, rank int) string {
	return filepath.Join(root, fmt.Sprintf("step%d", step), fmt.Sprintf("rank%d", rank))
}

func rankFile(root string, step, rank int, name string) string {
	return filepath.Join(rankDir(root, step, rank), name)
}

// A join carries complete, unread and not_dumped as the rank folders in
// one place give them: rank folders missing at a step or at every step,
// without a dump.json, unreadable, damaged, and a next step not read, on a
// clean run and on a run with a NaN, each split over three node folders.
func TestJoinMatchesOnePlaceUnread(t *testing.T) {
	damage := []struct {
		name     string
		damage   func(t *testing.T, root string)
		complete bool // what the single-place verdict says
		reason   string
	}{
		{"folder missing", func(t *testing.T, root string) { removeAll(t, rankDir(root, 1, 3)) }, false, "no folder"},
		{"no dump.json", func(t *testing.T, root string) { removeAll(t, rankFile(root, 1, 2, "dump.json")) }, false, "unreadable"},
		{"unreadable", func(t *testing.T, root string) { writeTestFile(t, rankFile(root, 1, 2, "dump.json"), "\x00 not json") }, false, "unreadable"},
		{"damaged", func(t *testing.T, root string) { cutInHalf(t, rankFile(root, 1, 0, "dump.json")) }, false, "damaged"},
		{"next step unread", func(t *testing.T, root string) {
			for rank := range 4 {
				writeTestFile(t, rankFile(root, 3, rank, "dump.json"), "garbage")
			}
		}, false, "unreadable"},
		{"rank not dumped", func(t *testing.T, root string) {
			for step := range 4 {
				removeAll(t, rankDir(root, step, 2))
			}
		}, true, ""},
	}
	for _, run := range []struct {
		name  string
		fault *synth.Fault
	}{{"clean", nil}, {"nan", logNegative}} {
		for i, d := range damage {
			t.Run(run.name+"/"+d.name, func(t *testing.T) {
				t.Parallel()
				dir := smallRun(t, run.fault)
				d.damage(t, dir)
				want, err := Run(context.Background(), Options{Path: dir})
				if err != nil {
					t.Fatal(err)
				}
				if want.Complete != d.complete || (d.reason != "" && !hasReason(want.Unread, d.reason)) || (d.reason == "" && len(want.NotDumped) == 0) {
					t.Fatalf("the case does not test what it says: complete %v, unread %+v, not dumped %v", want.Complete, want.Unread, want.NotDumped)
				}
				checkJoin(t, dir, 3, int64(i))
			})
		}
	}
}

// hasReason reports whether an unread row has the reason.
func hasReason(rows []verdict.UnreadRanks, reason string) bool {
	return slices.ContainsFunc(rows, func(u verdict.UnreadRanks) bool { return u.Reason == reason })
}

func removeAll(t *testing.T, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
}

func writeTestFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func cutInHalf(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, p, string(b[:len(b)/2]))
}

// byBlocks puts rank r of four on node r/2 (two nodes), unevenly puts
// ranks 0 and 1 on node 0, rank 2 on node 1 and rank 3 on node 2.
var (
	byBlocks = map[int]int{0: 0, 1: 0, 2: 1, 3: 1}
	unevenly = map[int]int{0: 0, 1: 0, 2: 1, 3: 2}
)

// joinWithout summarises the dump's ranks on the nodes given and joins
// every node's summary but the one left out; it also returns the first
// line of the text verdict.
func joinWithout(t *testing.T, dir string, node map[int]int, nodes, left int) (*verdict.Verdict, string) {
	t.Helper()
	layout, err := dump.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	roots := copyToNodes(t, layout, node, nodes)
	files := summariseNodes(t, roots, false)
	v, err := Run(context.Background(), Options{Summaries: slices.Delete(slices.Clone(files), left, left+1)})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.Text(&b, v); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(b.String(), "\n")
	return v, first
}

// A node whose summary is missing: its ranks (told by where the other
// nodes' ranks lie, or not) are expected and unread, so a clean join is
// not complete (exit status 3) and an anomaly's confidence is at most
// medium, with a reason naming the ranks, or the node when its ranks
// cannot be told.
func TestJoinMissingNode(t *testing.T) {
	for _, c := range []struct {
		name        string
		fault       *synth.Fault
		node        map[int]int
		nodes, left int
		first       string // the text verdict's first line starts so
		ranks       []int  // the missing node's ranks, as the verdict tells them
		reason      string // a confidence reason holds it
	}{
		{"clean, ranks told", nil, byBlocks, 2, 1, "nanhunt: no NaN or Inf in what could be read; steps 0-3 (ranks 2,3) could not be read; no summary came from node 1 of 2 (ranks 2,3).", []int{2, 3}, ""},
		{"clean, ranks unknown", nil, unevenly, 3, 2, "nanhunt: no NaN or Inf in what could be read; no summary came from node 2 of 3 (its ranks unknown).", []int{}, ""},
		{"nan, ranks told", logNegative, byBlocks, 2, 1, "nanhunt: the first NaN was born at step 2 on rank 1", []int{2, 3}, "no summary from node(s) 1 of 2 (ranks 2,3 of the job have no summary)"},
		{"nan, ranks unknown", logNegative, unevenly, 3, 2, "nanhunt: the first NaN was born at step 2 on rank 1", []int{}, "no summary from node(s) 2 of 3 (their ranks are unknown)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v, first := joinWithout(t, smallRun(t, c.fault), c.node, c.nodes, c.left)
			if !strings.HasPrefix(first, c.first) {
				t.Errorf("first line %q, want %q", first, c.first)
			}
			want := []verdict.MissingNode{{Node: c.left, Of: c.nodes, Ranks: c.ranks, Why: "no summary"}}
			if v.Complete || fmt.Sprint(v.MissingNodes) != fmt.Sprint(want) {
				t.Errorf("complete %v, missing nodes %+v: want false, %+v", v.Complete, v.MissingNodes, want)
			}
			for _, st := range v.Steps {
				if st.Status == "clean" {
					t.Errorf("step %d is called clean without the ranks of node %d", st.Step, c.left)
				}
			}
			if len(c.ranks) > 0 && (!hasReason(v.Unread, "no summary") || !slices.Equal(v.Unread[0].Ranks, c.ranks)) {
				t.Errorf("unread %+v, want ranks %v without a summary", v.Unread, c.ranks)
			}
			if c.fault == nil {
				return
			}
			if o := v.Origin; o == nil || o.Confidence == "high" || !strings.Contains(strings.Join(o.Reasons, "\n"), c.reason) {
				t.Errorf("origin %+v: want confidence at most medium, a reason %q", o, c.reason)
			}
		})
	}
}

// Asked about the ranks of the nodes that sent their summaries, a join is
// complete without the node whose ranks it can tell; not without one whose
// ranks it cannot.
func TestJoinMissingNodeOtherRanks(t *testing.T) {
	for _, c := range []struct {
		name     string
		node     map[int]int
		nodes    int
		complete bool
	}{{"ranks told", byBlocks, 2, true}, {"ranks unknown", unevenly, 3, false}} {
		t.Run(c.name, func(t *testing.T) {
			layout, err := dump.Discover(smallRun(t, nil))
			if err != nil {
				t.Fatal(err)
			}
			files := summariseNodes(t, copyToNodes(t, layout, c.node, c.nodes), false)
			v, err := Run(context.Background(), Options{Summaries: files[:c.nodes-1], Ranks: map[int]bool{0: true, 1: true}})
			if err != nil {
				t.Fatal(err)
			}
			if v.Complete != c.complete || len(v.Unread) != 0 {
				t.Errorf("ranks 0,1: complete %v, unread %+v, missing nodes %+v; want complete %v, nothing unread", v.Complete, v.Unread, v.MissingNodes, c.complete)
			}
		})
	}
}

// A collective that made the value itself, with a node missing: nothing
// says it received finite values on every rank.
func TestJoinMissingNodeCollectiveOrigin(t *testing.T) {
	v, _ := joinWithout(t, scenarioDir(t, "allreduce-overflow"), unevenly, 3, 2)
	var b bytes.Buffer
	if err := report.Text(&b, v); err != nil {
		t.Fatal(err)
	}
	text := b.String() + strings.Join(v.Origin.Reasons, "\n")
	if !v.Origin.Collective || strings.Contains(text, "on every rank and") || !strings.Contains(text, "on every rank read (no summary from node 2 of 3 (its ranks unknown))") {
		t.Errorf("collective %v; the text claims every rank, or does not name the missing node:\n%s", v.Origin.Collective, text)
	}
}

// A mark another job of the same run left in the shared folder stops no
// node and is removed; a mark of the job whose node's summary never came
// stops the nodes, and the join calls what they did not read unread, never
// clean.
func TestJoinStaleMark(t *testing.T) {
	dir := denseRun(t, 7, &synth.Fault{Kind: synth.ExpOverflow, Step: 5, Ranks: []int{3}})
	want, err := Run(context.Background(), Options{Path: dir})
	if err != nil || want.Origin == nil || want.Origin.Step != 5 {
		t.Fatalf("the run's verdict: %v %+v", err, want)
	}
	layout, err := dump.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	roots := copyToNodes(t, layout, byBlocks, 2)
	job := Job{ID: "991", From: "slurm"}
	for _, c := range []struct {
		name     string
		markJob  Job
		first    string
		complete bool
		marks    int // left in the folder after both nodes
	}{
		{"another job", Job{ID: "990", From: "slurm"}, "nanhunt: the first Inf was born at step 5 on rank 3", true, 2}, // the nodes' own
		{"marker's summary missing", job, "nanhunt: no NaN or Inf in what could be read; steps 3-7 (ranks 0-3) could not be read.", false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			shared := t.TempDir()
			markBoard{dir: shared, run: "test", job: c.markJob}.leave("", 2, Node{Index: 7})
			files, _ := summariseShared(t, roots, shared, job)
			got, err := Run(context.Background(), Options{Summaries: files})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := report.Text(&b, got); err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(b.String(), "\n"); !strings.HasPrefix(first, c.first) || got.Complete != c.complete {
				t.Errorf("first line %q, complete %v: want %q, %v", first, got.Complete, c.first, c.complete)
			}
			if c.complete {
				if w, g := normalised(t, want, dir), normalised(t, got, roots...); w != g {
					t.Errorf("joined verdict differs from the single-place one:\n%s", lineDiff(w, g))
				}
			} else if !hasReason(got.Unread, "not summarised") || slices.ContainsFunc(got.Steps, func(st verdict.StepState) bool { return st.Step > 2 && st.Status == "clean" }) {
				t.Errorf("unread %+v, steps %+v: want the steps after 2 not summarised, none clean", got.Unread, got.Steps)
			}
			marks, _ := filepath.Glob(filepath.Join(shared, ".nanhunt-lasting-*"))
			for _, m := range marks {
				if b, _ := os.ReadFile(m); !strings.Contains(string(b), `"job":"991"`) {
					t.Errorf("a mark of another job was left: %s", b)
				}
			}
			if len(marks) != c.marks {
				t.Errorf("marks left %v, want %d", marks, c.marks)
			}
		})
	}
}

func TestPlaceRanks(t *testing.T) {
	set := func(ranks ...int) map[int]bool {
		out := map[int]bool{}
		for _, r := range ranks {
			out[r] = true
		}
		return out
	}
	for _, c := range []struct {
		name    string
		held    map[int]map[int]bool
		count   int
		missing []int
		want    map[int][]int // nil: cannot be told
	}{
		{"blocks", map[int]map[int]bool{0: set(0, 1), 2: set(4, 5)}, 3, []int{1}, map[int][]int{1: {2, 3}}},
		{"in turn", map[int]map[int]bool{0: set(0, 3), 1: set(1, 4)}, 3, []int{2}, map[int][]int{2: {2, 5}}},
		{"one rank a node", map[int]map[int]bool{0: set(0), 1: set(1)}, 4, []int{2, 3}, map[int][]int{2: {2}, 3: {3}}},
		{"uneven", map[int]map[int]bool{0: set(0, 1), 1: set(2)}, 3, []int{2}, nil},
		{"neither layout", map[int]map[int]bool{0: set(0, 2), 1: set(1, 5)}, 3, []int{2}, nil},
		{"no node", map[int]map[int]bool{}, 2, []int{0, 1}, nil},
		{"no count", map[int]map[int]bool{0: set(0)}, 0, nil, nil},
	} {
		got, told := placeRanks(c.held, c.count, c.missing)
		if told != (c.want != nil) || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: placed %v (told %v), want %v", c.name, got, told, c.want)
		}
	}
}

// The highest rank of a tensor-parallel run has no folder at any step, and
// only the process groups of the other ranks name it (the files the byte
// search clears among them): it is not dumped in one place, and in a join
// of node summaries, which keep of those lists only what the job's ranks
// need.
func TestJoinMatchesOnePlaceHighestRankNamedByGroups(t *testing.T) {
	for _, run := range []struct {
		name  string
		fault *synth.Fault
	}{{"clean", nil}, {"nan", &synth.Fault{Kind: synth.LogNegative, Step: 2, Ranks: []int{1}}}} {
		t.Run(run.name, func(t *testing.T) {
			spec := synth.Spec{Name: "tp", Ranks: 4, TP: 2, Steps: []int{0, 1, 2, 3}, Model: synth.TensorParallel, Level: "L1", Fault: run.fault, Seed: 5}
			dir := filepath.Join(t.TempDir(), "dump")
			if _, err := synth.Generate(spec, dir); err != nil {
				t.Fatal(err)
			}
			for step := range 4 {
				removeAll(t, rankDir(dir, step, 3))
			}
			want, err := Run(context.Background(), Options{Path: dir})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(want.NotDumped, []int{3}) {
				t.Fatalf("not dumped %v in one place, want [3]", want.NotDumped)
			}
			checkJoin(t, dir, 2, 7)
		})
	}
}

// A join asked about some ranks, of summaries that keep the ranks process
// groups name in brief, says that it cannot tell every rank not dumped
// among them, and the origin's confidence drops.
func TestJoinWithRanksOfBriefSummariesWarns(t *testing.T) {
	spec := synth.Spec{Name: "tp", Ranks: 4, TP: 2, Steps: []int{0, 1, 2, 3}, Model: synth.TensorParallel, Level: "L1",
		Fault: &synth.Fault{Kind: synth.LogNegative, Step: 2, Ranks: []int{1}}, Seed: 5}
	dir := filepath.Join(t.TempDir(), "dump")
	if _, err := synth.Generate(spec, dir); err != nil {
		t.Fatal(err)
	}
	files := summariseNodes(t, splitNodes(t, dir, 2, rand.New(rand.NewSource(3))), false)
	for _, ranks := range []map[int]bool{nil, {0: true, 1: true}} {
		v, err := Run(context.Background(), Options{Summaries: files, Ranks: ranks})
		if err != nil {
			t.Fatal(err)
		}
		warned := slices.ContainsFunc(v.Warnings, func(w verdict.Warning) bool { return strings.Contains(w.Message, "only the highest") })
		if warned != (ranks != nil) {
			t.Errorf("ranks %v: warned %v", ranks, warned)
		}
		if ranks != nil && (v.Origin == nil || v.Origin.Confidence == "high") {
			t.Errorf("ranks %v: origin %+v, want one of confidence medium or low", ranks, v.Origin)
		}
	}
}
