package htmlreport

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/trace"
)

// fixtures returns ../shared/fixtures next to the repository, or skips.
func fixtures(t *testing.T) string { return fixturedir.Dir(t) }

func traceDump(t *testing.T, path string) *verdict.Verdict {
	t.Helper()
	v, err := trace.Run(context.Background(), trace.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type callWant struct {
	index int
	op    string
	role  string
}

func checkCalls(t *testing.T, tl *Timeline, want []callWant) {
	t.Helper()
	if len(tl.Calls) != len(want) {
		for _, c := range tl.Calls {
			t.Logf("  %d %s %s", c.Index, c.Op, c.Role)
		}
		t.Fatalf("%d calls, want %d", len(tl.Calls), len(want))
	}
	for i, w := range want {
		c := tl.Calls[i]
		if c.Index != w.index || c.Op != w.op || c.Role != w.role {
			t.Errorf("call %d: %d %s %s, want %d %s %s", i, c.Index, c.Op, c.Role, w.index, w.op, w.role)
		}
	}
}

func TestHTMLTimelineFromDump(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	v := traceDump(t, dir)
	tl := buildTimeline(v, dir)
	if tl.From != "dump" || tl.Step != 5 || tl.Rank != 2 || len(tl.Warnings) != 0 {
		t.Fatalf("timeline from %s, step %d rank %d, warnings %q", tl.From, tl.Step, tl.Rank, tl.Warnings)
	}
	checkCalls(t, tl, []callWant{
		{73, "Functional.layer_norm.0.backward", "clean"},
		{74, "Tensor.__add__.0.backward", "clean"},
		{75, "Functional.linear.1.backward", "clean"},
		{76, "Functional.pad.0.backward", "clean"},
		{77, "Torch.sqrt.0.backward", "root"},
		{78, "Tensor.sum.0.backward", "chain"},
		{79, "Tensor.__mul__.1.backward", "first_nan"},
		{83, "Distributed.all_reduce.1.forward", "carrier"},
	})
	root := tl.Calls[4]
	if root.Holds != "+inf" || len(root.Inputs) == 0 || root.Inputs[0].Holds != "finite" || root.Gap != 0 {
		t.Errorf("root call %+v", root)
	}
	if tl.Calls[0].Gap != 73 || tl.Calls[7].Gap != 3 {
		t.Errorf("gaps %d and %d, want 73 and 3", tl.Calls[0].Gap, tl.Calls[7].Gap)
	}
	// the phase, not the name's direction: the gradient all_reduce is named
	// ….forward but runs in the reduction, as the ranks table says
	if tl.Calls[7].Phase != "gradient reduction" || tl.Calls[7].Dir != "forward" || root.Phase != "backward" {
		t.Errorf("phases: carrier %q (dir %q), root %q", tl.Calls[7].Phase, tl.Calls[7].Dir, root.Phase)
	}
	for _, st := range v.Steps {
		for _, a := range st.Anomalous {
			for _, c := range tl.Calls {
				if st.Step == v.Origin.Step && a.Rank == tl.Rank && a.Op == c.Op && a.Phase != c.Phase {
					t.Errorf("%s: the timeline says %q, the ranks table %q", c.Op, c.Phase, a.Phase)
				}
			}
		}
	}
	page := render(t, v, Options{DumpPath: dir})
	for _, want := range []string{"Origin timeline", "Tensor.sum.0.backward", "the Inf became NaN here", "… 73 calls not shown …"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// copyRank copies one rank folder of a fixture into a fresh dump_path.
func copyRank(t *testing.T, from string, step, rank int) (root, dumpFile string) {
	t.Helper()
	root = t.TempDir()
	dst := filepath.Join(root, "step"+itoa(step), "rank"+itoa(rank))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dump.json", "stack.json", "construct.json"} {
		b, err := os.ReadFile(filepath.Join(from, "step"+itoa(step), "rank"+itoa(rank), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, filepath.Join(dst, "dump.json")
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestHTMLTimelineDamaged cuts the origin rank's dump.json: after the root
// op the page shows what came before the damage, with a warning; before it,
// the page falls back on the verdict, with a warning. Neither is an error.
func TestHTMLTimelineDamaged(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	v := traceDump(t, dir)
	root, file := copyRank(t, dir, 5, 2)
	full, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(full, []byte(`"Tensor.__mul__.1.backward"`))
	if cut < 0 {
		t.Fatal("fixture changed: no Tensor.__mul__.1.backward")
	}
	if err := os.WriteFile(file, full[:cut+10], 0o644); err != nil {
		t.Fatal(err)
	}
	tl := buildTimeline(v, root)
	if tl.From != "dump" || len(tl.Warnings) != 1 || !strings.Contains(tl.Warnings[0], "damaged") {
		t.Fatalf("cut after the root op: from %s, warnings %q", tl.From, tl.Warnings)
	}
	if tl.Calls[len(tl.Calls)-1].Op != "Tensor.sum.0.backward" {
		t.Errorf("last call %s, want Tensor.sum.0.backward", tl.Calls[len(tl.Calls)-1].Op)
	}

	cut = bytes.Index(full, []byte(`"Torch.sqrt.0.backward"`))
	if err := os.WriteFile(file, full[:cut-40], 0o644); err != nil {
		t.Fatal(err)
	}
	tl = buildTimeline(v, root)
	if tl.From != "verdict" || len(tl.Warnings) != 1 || !strings.Contains(tl.Warnings[0], "ends before Torch.sqrt.0.backward") {
		t.Fatalf("cut before the root op: from %s, warnings %q", tl.From, tl.Warnings)
	}
	checkCalls(t, tl, []callWant{
		{77, "Torch.sqrt.0.backward", "root"},
		{79, "Tensor.__mul__.1.backward", "first_nan"},
		{-1, "Distributed.all_reduce.1.forward", "carrier"}, // its index on rank 2 is not in the verdict
	})
	page := render(t, v, Options{DumpPath: root})
	if !strings.Contains(page, "the timeline below is the verdict") {
		t.Errorf("the page does not say where its timeline came from")
	}

	if tl := buildTimeline(v, filepath.Join(root, "missing")); tl.From != "verdict" || len(tl.Warnings) != 1 {
		t.Errorf("a missing dump: from %s, warnings %q", tl.From, tl.Warnings)
	}
}

func TestHTMLTimelineFromVerdict(t *testing.T) {
	v := readVerdict(t, "verdict_optimizer-nan-fused.json")
	tl := buildTimeline(v, "")
	if tl.From != "verdict" || len(tl.Calls) == 0 || tl.Calls[len(tl.Calls)-1].Role != "root" {
		t.Fatalf("timeline %+v", tl)
	}
	if !strings.Contains(tl.Calls[len(tl.Calls)-1].Note, "first call that shows it") {
		t.Errorf("an uncaptured root is called %q", tl.Calls[len(tl.Calls)-1].Note)
	}
	if tl := buildTimeline(readVerdict(t, "verdict_resnet-clean.json"), ""); tl != nil {
		t.Errorf("a clean verdict has a timeline")
	}
}
