package trace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/verdict"
)

type callWant struct {
	index int
	op    string
	role  string
}

func checkCalls(t *testing.T, tl *verdict.Timeline, want []callWant) {
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

func sqrtZeroDir(t *testing.T) string {
	return filepath.Join(fixturedir.Dir(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
}

func runDump(t *testing.T, dir string) *verdict.Verdict {
	t.Helper()
	v, err := Run(context.Background(), Options{Path: dir, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The origin rank's calls around the root op, read during Run: the clean
// calls before it, the calls that carried the Inf to the first NaN, and
// the collective that carried it, each in the phase the ranks table gives
// it.
func TestTimeline(t *testing.T) {
	dir := sqrtZeroDir(t)
	v := runDump(t, dir)
	tl := v.Origin.Timeline
	if tl == nil || tl.Rank != 2 || tl.Unread != "" || len(tl.Warnings) != 0 || filepath.Base(string(tl.File)) != "dump.json" || string(v.Scanned.Path) != dir {
		t.Fatalf("timeline %+v, path %q", tl, v.Scanned.Path)
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
	if root.Holds != "+inf" || len(root.Inputs) == 0 || root.Inputs[0].Holds != "finite" || tl.Calls[0].Holds != "finite" {
		t.Errorf("root call %+v", root)
	}
	// the phase, not the name's direction: the gradient all_reduce is named
	// ….forward but runs in the reduction
	if tl.Calls[7].Phase != "gradient reduction" || root.Phase != "backward" {
		t.Errorf("phases: carrier %q, root %q", tl.Calls[7].Phase, root.Phase)
	}
	samePhases(t, v)
}

// samePhases: a call of the timeline that the ranks table names has the
// phase the table gives it.
func samePhases(t *testing.T, v *verdict.Verdict) {
	t.Helper()
	tl := v.Origin.Timeline
	for _, st := range v.Steps {
		for _, a := range st.Anomalous {
			for _, c := range tl.Calls {
				if st.Step == v.Origin.Step && a.Rank == tl.Rank && a.Op == c.Op && a.Phase != c.Phase {
					t.Errorf("%s: the timeline says %q, the ranks table %q", c.Op, c.Phase, a.Phase)
				}
			}
		}
	}
}

// The custom grad kernel that a backward calls is in the backward, as the
// verdict says, though its name says forward.
func TestTimelinePhasesRealRun(t *testing.T) {
	v := runDump(t, filepath.Join(realruns.Dir(t, "custom-bwd-kernel"), "L1"))
	tl := v.Origin.Timeline
	if tl == nil || len(tl.Calls) == 0 {
		t.Fatalf("timeline %+v", tl)
	}
	found := false
	for _, c := range tl.Calls {
		if c.Role == "root" {
			found = true
			if c.Op != v.Origin.Op || c.Phase != v.Origin.Phase || c.Phase != "backward" {
				t.Errorf("root %s in %q; the origin %s in %q", c.Op, c.Phase, v.Origin.Op, v.Origin.Phase)
			}
		}
	}
	if !found {
		t.Error("no root call")
	}
	samePhases(t, v)
}

// copyRank copies one rank folder of a fixture into a fresh dump_path.
func copyRank(t *testing.T, from string, step, rank int) (root, dumpFile string) {
	t.Helper()
	root = t.TempDir()
	sub := filepath.Join("step"+strconv.Itoa(step), "rank"+strconv.Itoa(rank))
	if err := os.MkdirAll(filepath.Join(root, sub), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dump.json", "stack.json", "construct.json"} {
		b, err := os.ReadFile(filepath.Join(from, sub, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, sub, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, filepath.Join(root, sub, "dump.json")
}

// timelineAt reads the timeline of v from the dump under root.
func timelineAt(t *testing.T, ctx context.Context, v *verdict.Verdict, root string) (*verdict.Timeline, error) {
	t.Helper()
	layout, err := dump.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	tl, _, err := timeline(ctx, v, layout, root, nil)
	return tl, err
}

// A cut dump.json: after the root op the timeline holds what came before
// the damage, with a warning; before it, it says why it holds no call. A
// rank without a folder is said too. None is an error.
func TestTimelineDamaged(t *testing.T) {
	dir := sqrtZeroDir(t)
	v := runDump(t, dir)
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
	tl, err := timelineAt(t, context.Background(), v, root)
	if err != nil || tl.Unread != "" || len(tl.Warnings) != 1 || !strings.Contains(tl.Warnings[0], "damaged") {
		t.Fatalf("cut after the root op: %v, %+v", err, tl)
	}
	if last := tl.Calls[len(tl.Calls)-1]; last.Op != "Tensor.sum.0.backward" || last.Phase != "backward" {
		t.Errorf("last call %s in %q, want Tensor.sum.0.backward in the backward", last.Op, last.Phase)
	}

	cut = bytes.Index(full, []byte(`"Torch.sqrt.0.backward"`))
	if err := os.WriteFile(file, full[:cut-40], 0o644); err != nil {
		t.Fatal(err)
	}
	tl, err = timelineAt(t, context.Background(), v, root)
	if err != nil || len(tl.Calls) != 0 || len(tl.Warnings) != 0 || !strings.Contains(tl.Unread, "ends before Torch.sqrt.0.backward") {
		t.Fatalf("cut before the root op: %v, %+v", err, tl)
	}

	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "step5", "rank0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "step5", "rank0", "dump.json"), []byte(`{"data": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tl, err = timelineAt(t, context.Background(), v, other)
	if err != nil || !strings.Contains(tl.Unread, "no dump.json of step 5, rank 2") || tl.File != "" {
		t.Errorf("no folder of the rank: %v, %+v", err, tl)
	}
}

// The reading of the timeline stops when the caller's context is done.
func TestTimelineCancelled(t *testing.T) {
	dir := sqrtZeroDir(t)
	v := runDump(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if tl, err := timelineAt(t, ctx, v, dir); !errors.Is(err, context.Canceled) || tl != nil {
		t.Errorf("cancelled: %+v, %v", tl, err)
	}
}
