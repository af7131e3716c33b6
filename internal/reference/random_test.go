package reference

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/internal/tinylimits"
	"github.com/nanhunt/nanhunt/internal/trace"
)

// Randomized runs: synth.Random(seed) picks a valid spec (world size,
// layout, gradient synchronisation, micro-batches, fault, format, damage,
// dumped steps, level, data mode); each run is generated, the fast path is
// held to the reference (phase included), with its normal limits and with
// tiny ones (internal/tinylimits), and the reference to the generator's
// truth.
//
//	NANHUNT_RANDOM_RUNS=2000 go test ./internal/reference -run TestRandom   # more runs (default 40)
//	NANHUNT_RANDOM_SEED=1234 go test ./internal/reference -run TestRandom -v # one seed
//	NANHUNT_RANDOM_SPEC=spec.json go test ./internal/reference -run TestRandomSpec -v
//
// A failure prints the seed and the spec as JSON (the file
// NANHUNT_RANDOM_SPEC reads).

const defaultRandomRuns = 40

func TestRandom(t *testing.T) {
	seeds, err := randomSeeds()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	root := t.TempDir()
	var mu sync.Mutex
	failed := 0
	next := make(chan int64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range next {
				spec := synth.Random(seed)
				// each run is removed once checked: 2000 runs would fill a disk
				dir, err := os.MkdirTemp(root, "seed")
				if err != nil {
					t.Error(err)
					return
				}
				problems := checkGenerated(dir, spec)
				if err := os.RemoveAll(dir); err != nil {
					t.Error(err)
				}
				if len(problems) == 0 {
					continue
				}
				b, _ := json.Marshal(spec)
				mu.Lock()
				failed++
				t.Errorf("seed %d (NANHUNT_RANDOM_SEED=%d): %d problems\n  spec: %s\n  %s", seed, seed, len(problems), b, joinLines(problems))
				mu.Unlock()
			}
		}()
	}
	for _, s := range seeds {
		next <- s
	}
	close(next)
	wg.Wait()
	t.Logf("%d random runs in %v, %d failed", len(seeds), time.Since(start).Round(time.Millisecond), failed)
}

// randomSeeds are the seeds to run: NANHUNT_RANDOM_SEED alone, else 1 to
// NANHUNT_RANDOM_RUNS (default 40).
func randomSeeds() ([]int64, error) {
	if s := os.Getenv("NANHUNT_RANDOM_SEED"); s != "" {
		seed, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("NANHUNT_RANDOM_SEED: %w", err)
		}
		return []int64{seed}, nil
	}
	n := defaultRandomRuns
	if s := os.Getenv("NANHUNT_RANDOM_RUNS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("NANHUNT_RANDOM_RUNS: want a positive number, got %q", s)
		}
		n = v
	}
	seeds := make([]int64, n)
	for i := range seeds {
		seeds[i] = int64(i + 1)
	}
	return seeds, nil
}

// TestRandomSpec checks the spec in the JSON file NANHUNT_RANDOM_SPEC.
func TestRandomSpec(t *testing.T) {
	path := os.Getenv("NANHUNT_RANDOM_SPEC")
	if path == "" {
		t.Skip("NANHUNT_RANDOM_SPEC names no spec file")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var spec synth.Spec
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, p := range checkGenerated(t.TempDir(), spec) {
		t.Error(p)
	}
}

func joinLines(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += "\n  "
		}
		out += x
	}
	return out
}

// checkGenerated generates spec under dir and returns every disagreement:
// fast path vs reference, reference vs truth, and the invariants of
// README 5, 6 and 8 for unread and damaged ranks.
func checkGenerated(dir string, spec synth.Spec) []string {
	run := filepath.Join(dir, "run")
	truth, err := synth.Generate(spec, run)
	if err != nil {
		return []string{fmt.Sprintf("generate: %v", err)}
	}
	ref, err := Analyse(run, Options{})
	if err != nil {
		return []string{fmt.Sprintf("reference: %v", err)}
	}
	var out []string
	for _, m := range []struct {
		name string
		ctx  context.Context
	}{{"fast", context.Background()}, {"fast (tiny limits)", tinylimits.With(context.Background())}} {
		fast, err := trace.Run(m.ctx, trace.Options{Path: run})
		if err != nil {
			out = append(out, fmt.Sprintf("%s path: %v", m.name, err))
			continue
		}
		for _, l := range Diff(ref, FromTrace(fast)) {
			out = append(out, m.name+" vs reference: "+l+" (want = reference, got = fast path)")
		}
	}
	for _, l := range truthDiff(ref, truth) {
		out = append(out, "reference vs truth: "+l)
	}
	out = append(out, invariants(ref, spec)...)
	return out
}

// truthDiff lists the fields where the reference's verdict differs from
// the generator's truth: "field: reference X, truth Y".
func truthDiff(ref *Verdict, tr *synth.Truth) []string {
	var out []string
	eq := func(field string, r, w any) {
		if fmt.Sprint(r) != fmt.Sprint(w) {
			out = append(out, fmt.Sprintf("%s: reference %v, truth %v", field, r, w))
		}
	}
	eq("anomaly", ref.Anomaly, tr.Anomaly)
	var rec, want []string
	for _, r := range ref.Recovered {
		rec = append(rec, fmt.Sprintf("{step %d ranks %v op %s stage %s kind %s}", r.Step, r.Ranks, r.Op, r.Stage, r.Kind))
	}
	for _, r := range tr.Recovered {
		want = append(want, fmt.Sprintf("{step %d ranks %v op %s stage %s kind %s}", r.Step, r.Ranks, r.Op, r.Stage, r.Kind))
	}
	eq("recovered", rec, want)
	if !tr.Anomaly || ref.Origin == nil {
		return out
	}
	o := ref.Origin
	eq("origin.step", o.Step, tr.Step)
	eq("origin.ranks", o.Ranks, tr.Ranks)
	eq("origin.op", o.Op, tr.Op)
	eq("origin.stage", o.Stage, tr.Stage)
	eq("origin.phase", o.Phase, tr.Phase)
	eq("origin.kind", o.Kind, tr.Kind)
	eq("origin.tie", o.Tie, tr.Tie)
	eq("origin.captured", o.Captured, tr.Captured)
	eq("origin.unread", o.Unread, tr.Unread)
	var fn *OpRef
	if tr.FirstNaN != nil {
		fn = &OpRef{Step: tr.FirstNaN.Step, Rank: tr.FirstNaN.Rank, Op: tr.FirstNaN.Op}
	}
	eq("first_nan", fmtOpRef(ref.FirstNaN), fmtOpRef(fn))
	var c *Hop
	if tr.Carrier != nil {
		c = &Hop{Step: tr.Carrier.Step, Op: tr.Carrier.Op, FromRanks: tr.Carrier.FromRanks, ToRanks: tr.Carrier.ToRanks}
	}
	eq("carrier", fmtHop(ref.Carrier), fmtHop(c))
	return out
}

// invariants: an origin names ranks; a carrier's senders are not its
// receivers; a step with a damaged or unread rank is never high confidence.
func invariants(ref *Verdict, spec synth.Spec) []string {
	var out []string
	o := ref.Origin
	if o == nil {
		return nil
	}
	if len(o.Ranks) == 0 {
		out = append(out, "invariant: origin.ranks is empty")
	}
	if c := ref.Carrier; c != nil {
		for _, r := range c.FromRanks {
			if slices.Contains(c.ToRanks, r) {
				out = append(out, fmt.Sprintf("invariant: carrier rank %d is a sender and a receiver", r))
			}
		}
	}
	for _, d := range spec.Damage {
		if d.Step == o.Step && (d.Kind != "" || d.TruncateAt > 0) && o.Confidence == "high" {
			out = append(out, fmt.Sprintf("invariant: confidence high although rank %d of step %d is damaged", d.Rank, d.Step))
		}
	}
	return out
}

// Forward-only dumps (data_mode ["forward"]) whose only non-finite values
// are masks are cleared by the byte search. (At level mix the additive
// mask is also an input of the Module entries, and a hit in a module entry
// is always parsed: it could be a weight.)
func TestForwardOnlyMasksCleared(t *testing.T) {
	for _, c := range []struct{ level, mask string }{{"L1", "masked_fill"}, {"L1", "add"}, {"mix", "masked_fill"}} {
		t.Run(c.level+"-"+c.mask, func(t *testing.T) {
			spec := synth.Spec{Name: "forward-only-clean", Ranks: 4, Steps: []int{0, 1, 2}, Layers: 2, Hidden: 32,
				Level: c.level, DataMode: "forward", Mask: c.mask, Seed: 3, LossLog: true, Format: synth.Format{OptimizerHooked: true}}
			dir := filepath.Join(t.TempDir(), "run")
			if _, err := synth.Generate(spec, dir); err != nil {
				t.Fatal(err)
			}
			v, err := trace.Run(context.Background(), trace.Options{Path: dir})
			if err != nil {
				t.Fatal(err)
			}
			if v.Anomaly || v.Scanned.Files == 0 || v.Scanned.Cleared != v.Scanned.Files {
				t.Errorf("anomaly %v, %d of %d files cleared", v.Anomaly, v.Scanned.Cleared, v.Scanned.Files)
			}
		})
	}
	t.Run("before the fault", func(t *testing.T) {
		var spec synth.Spec
		for _, sc := range synth.Scenarios() {
			if sc.Name == "forward-only" {
				spec = sc.Spec
			}
		}
		dir := filepath.Join(t.TempDir(), "run")
		if _, err := synth.Generate(spec, dir); err != nil {
			t.Fatal(err)
		}
		v, err := trace.Run(context.Background(), trace.Options{Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		// step 1, before the fault, is masks only on every rank
		if !v.Anomaly || v.Scanned.Cleared < spec.Ranks {
			t.Errorf("anomaly %v, %d of %d files cleared, want the %d of step 1 at least", v.Anomaly, v.Scanned.Cleared, v.Scanned.Files, spec.Ranks)
		}
	})
}
