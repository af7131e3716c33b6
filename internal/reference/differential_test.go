package reference

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/internal/tinylimits"
	"github.com/nanhunt/nanhunt/internal/trace"
)

// The differential test: the fast path (package trace) must reach the
// reference's verdict on every generated scenario and every real dump.
// Phase is left out until the fast path reports it.

// compareFast runs the fast path on dir and reports every field where it
// differs from the reference's verdict.
func compareFast(t *testing.T, label, dir string, ref *Verdict) {
	t.Helper()
	compareFastWith(t, label, dir, ref, Options{})
}

// compareStrict runs both analyses with Strict and compares them.
func compareStrict(t *testing.T, label, dir string) {
	t.Helper()
	ref, err := Analyse(dir, Options{Strict: true})
	if err != nil {
		t.Fatalf("%s: reference: %v", label, err)
	}
	compareFastWith(t, label+" (strict)", dir, ref, Options{Strict: true})
}

// compareFastWith runs the fast path on dir with opt's steps, ranks and
// strictness, with its normal limits and with every limit of its rank scan
// held to a few (internal/tinylimits: every fallback of a limit runs), and
// reports every field where it differs from the reference's verdict.
func compareFastWith(t *testing.T, label, dir string, ref *Verdict, opt Options) {
	t.Helper()
	compareFastIn(t, context.Background(), label, dir, ref, opt)
	t.Run("tiny-limits", func(t *testing.T) {
		t.Parallel()
		compareFastIn(t, tinylimits.With(context.Background()), label+" (tiny limits)", dir, ref, opt)
	})
}

// compareFastIn is compareFastWith under one context.
func compareFastIn(t *testing.T, ctx context.Context, label, dir string, ref *Verdict, opt Options) {
	t.Helper()
	fast, err := trace.Run(ctx, trace.Options{Path: dir, Steps: opt.Steps, Ranks: opt.Ranks, Strict: opt.Strict})
	if err != nil {
		t.Errorf("%s: fast path failed: %v", label, err)
		return
	}
	got := FromTrace(fast)
	lines := DiffWith(ref, got, DiffOptions{IgnorePhase: true})
	for _, line := range lines {
		t.Errorf("%s: %s (want = reference, got = fast path)", label, line)
	}
	// the phase, reported on its own so that its lines stand apart
	t.Run("phase", func(t *testing.T) {
		for _, line := range Diff(ref, got) {
			if !slices.Contains(lines, line) {
				t.Errorf("%s: %s (want = reference, got = fast path)", label, line)
			}
		}
	})
}

// truthCheck collects field disagreements with a ground truth.
type truthCheck struct {
	t     *testing.T
	label string
}

func (c truthCheck) eq(field string, ref, truth any) {
	c.t.Helper()
	if fmt.Sprint(ref) != fmt.Sprint(truth) {
		c.t.Errorf("%s: %s: reference %v, truth %v", c.label, field, ref, truth)
	}
}

func TestDifferentialSynth(t *testing.T) {
	for _, sc := range synth.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "run")
			truth, err := synth.Generate(sc.Spec, dir)
			if err != nil {
				t.Fatalf("%s: generate: %v", sc.Name, err)
			}
			ref, err := Analyse(dir, Options{})
			if err != nil {
				t.Fatalf("%s: reference: %v", sc.Name, err)
			}
			t.Run("fast-vs-reference", func(t *testing.T) { compareFast(t, sc.Name, dir, ref) })
			t.Run("fast-vs-reference-strict", func(t *testing.T) { compareStrict(t, sc.Name, dir) })
			t.Run("reference-vs-truth", func(t *testing.T) { compareSynthTruth(t, sc.Name, ref, truth) })
		})
	}
}

func compareSynthTruth(t *testing.T, label string, ref *Verdict, tr *synth.Truth) {
	// every field the truth has: phase, unread and recovered too
	for _, l := range truthDiff(ref, tr) {
		t.Errorf("%s: %s", label, l)
	}
}

// The real msprobe fixtures: generated 4-rank runs with a known origin
// (levels L1 and mix) and clean real dumps.
func TestDifferentialFixtures(t *testing.T) {
	root := fixturedir.Dir(t, "msprobe-generated")
	scenarios, _ := filepath.Glob(filepath.Join(root, "*", "ground_truth.json"))
	if len(scenarios) == 0 {
		t.Fatalf("no scenario under %s", root)
	}
	for _, gt := range scenarios {
		scenario := filepath.Dir(gt)
		name := filepath.Base(scenario)
		for _, level := range []string{"L1", "mix"} {
			label := name + "/" + level
			t.Run(label, func(t *testing.T) {
				dir := filepath.Join(scenario, level)
				ref, err := Analyse(dir, Options{})
				if err != nil {
					t.Fatalf("%s: reference: %v", label, err)
				}
				t.Run("fast-vs-reference", func(t *testing.T) { compareFast(t, label, dir, ref) })
				t.Run("fast-vs-reference-strict", func(t *testing.T) { compareStrict(t, label, dir) })
				t.Run("reference-vs-truth", func(t *testing.T) { compareGroundTruth(t, label, gt, ref) })
			})
		}
	}
}

// compareGroundTruth checks the origin against a fixture's ground_truth.json.
func compareGroundTruth(t *testing.T, label, file string, ref *Verdict) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var gt struct {
		Origin struct {
			Rank, Step int
			Op         string
		}
	}
	if err := json.Unmarshal(b, &gt); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	c := truthCheck{t, label}
	c.eq("anomaly", ref.Anomaly, true)
	if ref.Origin == nil {
		return
	}
	c.eq("origin.step", ref.Origin.Step, gt.Origin.Step)
	c.eq("origin.ranks", ref.Origin.Ranks, []int{gt.Origin.Rank})
	c.eq("origin.op", ref.Origin.Op, gt.Origin.Op)
}

func TestDifferentialRealClean(t *testing.T) {
	root := fixturedir.Dir(t, "msprobe-real")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || !holdsDump(dir) {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			ref, err := Analyse(dir, Options{})
			if err != nil {
				t.Fatalf("%s: reference: %v", e.Name(), err)
			}
			t.Run("fast-vs-reference", func(t *testing.T) { compareFast(t, e.Name(), dir, ref) })
			t.Run("reference-vs-truth", func(t *testing.T) {
				truthCheck{t, e.Name()}.eq("anomaly", ref.Anomaly, false)
			})
		})
	}
	if n == 0 {
		t.Fatalf("no dump under %s", root)
	}
}

// holdsDump tells a folder with a dump.json somewhere below it.
func holdsDump(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "dump.json" {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// The real runs kept in testdata/realruns, with their truth.
func TestDifferentialRealRuns(t *testing.T) {
	names := realruns.Scenarios()
	if len(names) == 0 {
		t.Fatal("no real runs in testdata/realruns")
	}
	for _, name := range names {
		tr := realruns.Truth(t, name)
		dir := realruns.Dir(t, name)
		for _, level := range tr.Levels {
			label := name + "/" + level
			t.Run(label, func(t *testing.T) {
				path := filepath.Join(dir, level)
				ref, err := Analyse(path, Options{})
				if err != nil {
					t.Fatalf("%s: reference: %v", label, err)
				}
				t.Run("fast-vs-reference", func(t *testing.T) { compareFast(t, label, path, ref) })
				t.Run("fast-vs-reference-strict", func(t *testing.T) { compareStrict(t, label, path) })
				t.Run("reference-vs-truth", func(t *testing.T) { compareRealTruth(t, label, level, ref, tr) })
			})
		}
	}
}

func compareRealTruth(t *testing.T, label, level string, ref *Verdict, tf realruns.TruthFile) {
	c := truthCheck{t, label}
	tr := tf.Truth
	c.eq("anomaly", ref.Anomaly, tr.Anomaly)
	var recovered []string
	for _, r := range ref.Recovered {
		recovered = append(recovered, fmt.Sprintf("step %d ranks %v op %s", r.Step, r.Ranks, r.Op))
	}
	var want []string
	for _, r := range tr.Recovered {
		want = append(want, fmt.Sprintf("step %d ranks %v op %s", r.Step, r.Ranks, r.Op))
	}
	c.eq("recovered", recovered, want)
	if !tr.Anomaly || ref.Origin == nil {
		return
	}
	op := tr.Op
	if ov, ok := tf.LevelOverrides[level]; ok && ov.Op != "" {
		op = ov.Op
	}
	o := ref.Origin
	c.eq("origin.step", o.Step, tr.Step)
	c.eq("origin.ranks", o.Ranks, tr.Ranks)
	c.eq("origin.op", o.Op, op)
	c.eq("origin.stage", o.Stage, tr.Stage)
	c.eq("origin.kind", o.Kind, tr.Kind)
	c.eq("origin.tie", o.Tie, tr.Tie)
	c.eq("origin.captured", o.Captured, tr.Captured)
	var fn *OpRef
	if tr.FirstNaN != nil {
		fn = &OpRef{Step: tr.FirstNaN.Step, Rank: tr.FirstNaN.Rank, Op: tr.FirstNaN.Op}
	}
	c.eq("first_nan", fmtOpRef(ref.FirstNaN), fmtOpRef(fn))
	var carrier *Hop
	if tr.Carrier != nil {
		carrier = &Hop{Step: tr.Carrier.Step, Op: tr.Carrier.Op, FromRanks: slices.Clone(tr.Carrier.FromRanks), ToRanks: slices.Clone(tr.Carrier.ToRanks)}
	}
	c.eq("carrier", fmtHop(ref.Carrier), fmtHop(carrier))
}
