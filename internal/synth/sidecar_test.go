package synth

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/monitor"
	"github.com/nanhunt/nanhunt/internal/synth/sim"
	"github.com/nanhunt/nanhunt/internal/trainlog"
)

// sidecarRun is a generated run with its sidecars.
type sidecarRun struct {
	spec  Spec
	truth *Truth
	dump  string
	log   string // the train.log file
	mon   string
}

func scenarioSpecNamed(t *testing.T, name string) Spec {
	t.Helper()
	for _, sc := range Scenarios() {
		if sc.Name == name {
			return sc.Spec
		}
	}
	t.Fatalf("no scenario %q", name)
	return Spec{}
}

func generateSidecars(t *testing.T, spec Spec, side Sidecars) sidecarRun {
	t.Helper()
	root := t.TempDir()
	side.LogDir = filepath.Join(root, "log")
	side.MonitorDir = filepath.Join(root, "monitor")
	run := sidecarRun{spec: spec, dump: filepath.Join(root, "dump"), log: filepath.Join(side.LogDir, "train.log"), mon: side.MonitorDir}
	tr, err := GenerateWith(spec, run.dump, side)
	if err != nil {
		t.Fatal(err)
	}
	run.truth = tr
	return run
}

// lossBadStep reads the first step with a non-finite loss from the truth's
// notes, -1 when the loss stays finite.
func lossBadStep(t *testing.T, tr *Truth) int {
	t.Helper()
	re := regexp.MustCompile(`^the loss is first non-finite at step (\d+)`)
	for _, n := range tr.Notes {
		if m := re.FindStringSubmatch(n); m != nil {
			s, _ := strconv.Atoi(m[1])
			return s
		}
		if strings.HasPrefix(n, "the loss stays finite") {
			return -1
		}
	}
	t.Fatalf("truth notes say nothing of the loss: %q", tr.Notes)
	return -1
}

// monitorBadRanks parses the monitor CSV files of one kind at one step
// directly and returns the ranks with a row holding NaN or Inf.
func monitorBadRanks(t *testing.T, monDir, kind string, step int) []int {
	t.Helper()
	folders, err := os.ReadDir(monDir)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`-rank(\d+)-[0-9a-f]{8}$`)
	var bad []int
	for _, f := range folders {
		m := re.FindStringSubmatch(f.Name())
		if m == nil {
			t.Fatalf("unexpected monitor folder %s", f.Name())
		}
		rank, _ := strconv.Atoi(m[1])
		name := fmt.Sprintf("%s_%d-%d.csv", kind, step, step)
		fh, err := os.Open(filepath.Join(monDir, f.Name(), name))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(fh).ReadAll()
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		head := rows[0]
		rankBad := false
		for _, row := range rows[1:] {
			for i, col := range head {
				v := row[i]
				switch col {
				case "nans":
					rankBad = rankBad || (v != "0.0" && v != "0")
				case "min", "max", "mean", "norm":
					rankBad = rankBad || v == "nan" || v == "inf" || v == "-inf"
				}
			}
		}
		if rankBad {
			bad = append(bad, rank)
		}
	}
	slices.Sort(bad)
	return bad
}

// firstBadGradStep is the first step whose reduced gradients are
// non-finite on some rank, from the monitor files; -1 if none.
func firstBadGradStep(t *testing.T, run sidecarRun) int {
	t.Helper()
	last := run.spec.Steps[len(run.spec.Steps)-1]
	for s := 0; s <= last; s++ {
		if len(monitorBadRanks(t, run.mon, "grad_reduced", s)) > 0 {
			return s
		}
	}
	return -1
}

func allRanks(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// TestSidecarLog reads the training log back with trainlog and checks the
// first non-finite iteration against the simulation.
func TestSidecarLog(t *testing.T) {
	cases := []struct {
		scenario string
		backward bool // the origin is in the backward pass or the gradient sync
	}{
		{"log-negative", false},
		{"exp-overflow", false},
		{"sendrecv-carrier", false},
		{"sqrt-zero-backward", true},
		{"custom-attention-backward", true},
		{"allreduce-overflow", true},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			run := generateSidecars(t, scenarioSpecNamed(t, c.scenario), Sidecars{})
			tr := run.truth
			l, err := trainlog.Read(context.Background(), []string{run.log}, trainlog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Files) != 1 || l.Files[0].Format != trainlog.FormatMegatron {
				t.Fatalf("files %+v, want one megatron log", l.Files)
			}
			last := run.spec.Steps[len(run.spec.Steps)-1]
			if got := l.Files[0].Records; got != last+1 {
				t.Errorf("%d iteration lines, want one per simulated step (%d)", got, last+1)
			}
			for _, w := range l.Warnings {
				t.Errorf("warning: %v", w)
			}
			s := l.Summary()
			if s.FirstNonFinite == nil {
				t.Fatal("the log shows no non-finite value")
			}
			first := s.FirstNonFinite.Step
			if first < tr.Step {
				t.Errorf("first non-finite step %d before the truth's step %d", first, tr.Step)
			}
			lossBad, gradBad := lossBadStep(t, tr), firstBadGradStep(t, run)
			want := gradBad
			if want < 0 || (lossBad >= 0 && lossBad < want) {
				want = lossBad
			}
			if first != want {
				t.Errorf("first non-finite step %d, simulation: loss %d, grad norm %d", first, lossBad, gradBad)
			}
			// training_log leaves a NaN loss out: the first such line is
			// the first non-finite loss
			if lossBad >= 0 {
				if s.FirstLossLeftOut == nil || s.FirstLossLeftOut.Step != lossBad {
					t.Errorf("first line without a loss %+v, want step %d", s.FirstLossLeftOut, lossBad)
				}
			} else if s.FirstLossLeftOut != nil {
				t.Errorf("a loss is left out at step %d but stays finite", s.FirstLossLeftOut.Step)
			}
			if s.FirstNonFiniteLoss != nil {
				t.Errorf("a non-finite loss printed at step %d: training_log leaves NaN out", s.FirstNonFiniteLoss.Step)
			}
			if s.NaNIterations == nil || *s.NaNIterations != 0 {
				t.Errorf("nan iterations %v, want 0 (no loss scaler skips)", s.NaNIterations)
			}
			if s.SkippedTotal != 0 {
				t.Errorf("%d skipped iterations, want none", s.SkippedTotal)
			}
			g := s.FirstNonFiniteGradNorm
			if g == nil {
				t.Fatal("no non-finite grad norm")
			}
			if c.backward {
				if g.Step != tr.Step {
					t.Errorf("grad norm first non-finite at step %d, want the origin step %d", g.Step, tr.Step)
				}
				if lossBad >= 0 && g.Step > lossBad {
					t.Errorf("grad norm non-finite at step %d, after the loss (%d)", g.Step, lossBad)
				}
				if s.StageHint != trainlog.StageBackward {
					t.Errorf("stage hint %q (%s), want backward", s.StageHint, s.StageReason)
				}
			} else if lossBad != tr.Step || g.Step != tr.Step {
				t.Errorf("forward origin at step %d: loss bad at %d, grad norm at %d", tr.Step, lossBad, g.Step)
			}
		})
	}
}

// TestSidecarLogNaNLoss checks the variant that prints the NaN loss.
func TestSidecarLogNaNLoss(t *testing.T) {
	run := generateSidecars(t, scenarioSpecNamed(t, "log-negative"), Sidecars{LogNaNLoss: true})
	l, err := trainlog.Read(context.Background(), []string{run.log}, trainlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := l.Summary()
	if s.FirstNonFiniteLoss == nil || s.FirstNonFiniteLoss.Step != run.truth.Step || s.FirstNonFiniteLoss.Kind != "nan" {
		t.Fatalf("first non-finite loss %+v, want nan at step %d", s.FirstNonFiniteLoss, run.truth.Step)
	}
	if s.FirstNonFinite.Metric != "loss" || s.StageHint != trainlog.StageForward {
		t.Errorf("first %+v, hint %q: want the loss, forward", s.FirstNonFinite, s.StageHint)
	}
	last := run.spec.Steps[len(run.spec.Steps)-1]
	if want := last - run.truth.Step + 1; s.NaNIterations == nil || *s.NaNIterations != want {
		t.Errorf("nan iterations %v, want %d", s.NaNIterations, want)
	}
}

// TestSidecarMonitor reads the monitor output back with the monitor
// package and checks where it places the first anomaly.
func TestSidecarMonitor(t *testing.T) {
	t.Run("forward", func(t *testing.T) {
		for _, name := range []string{"log-negative", "exp-overflow", "masked-softmax-nan"} {
			run := generateSidecars(t, scenarioSpecNamed(t, name), Sidecars{})
			f := readMonitor(t, run)
			tr := run.truth
			if f.Step != tr.Step || f.Stage != monitor.StageForward {
				t.Errorf("%s: monitor first anomaly at step %d (%s), truth step %d forward", name, f.Step, f.Stage, tr.Step)
			}
			if f.Forward == nil || !slices.Equal(f.Forward.RanksAnomalous, tr.Ranks) {
				t.Errorf("%s: anomalous activations %+v, want ranks %v", name, f.Forward, tr.Ranks)
			}
			if got := monitorBadRanks(t, run.mon, "actv", tr.Step); !slices.Equal(got, tr.Ranks) {
				t.Errorf("%s: activation files non-finite on ranks %v, want %v", name, got, tr.Ranks)
			}
			if tr.Step > 0 {
				if got := monitorBadRanks(t, run.mon, "actv", tr.Step-1); len(got) > 0 {
					t.Errorf("%s: activations non-finite before the origin step on ranks %v", name, got)
				}
			}
		}
	})
	// a gradient made non-finite on the source ranks only: unreduced
	// gradients are bad there, reduced ones on every rank of the group
	t.Run("rank-local-gradient", func(t *testing.T) {
		for _, name := range []string{"sqrt-zero-backward", "custom-attention-backward"} {
			run := generateSidecars(t, scenarioSpecNamed(t, name), Sidecars{})
			tr := run.truth
			group := allRanks(run.spec.Ranks) // data parallel over every rank
			if got := monitorBadRanks(t, run.mon, "grad_unreduced", tr.Step); !slices.Equal(got, tr.Ranks) {
				t.Errorf("%s: unreduced gradients non-finite on %v, want the source ranks %v", name, got, tr.Ranks)
			}
			if got := monitorBadRanks(t, run.mon, "grad_reduced", tr.Step); !slices.Equal(got, group) {
				t.Errorf("%s: reduced gradients non-finite on %v, want %v", name, got, group)
			}
			if got := monitorBadRanks(t, run.mon, "actv", tr.Step); len(got) > 0 {
				t.Errorf("%s: activations non-finite at the backward origin step on %v", name, got)
			}
			f := readMonitor(t, run)
			if f.Step != tr.Step || f.Stage != monitor.StageBackward {
				t.Errorf("%s: monitor first anomaly at step %d (%s), truth step %d backward", name, f.Step, f.Stage, tr.Step)
			}
			g := f.Gradients
			if g == nil || g.Step != tr.Step || g.Where != monitor.GradBeforeReduction {
				t.Fatalf("%s: gradients %+v, want before the reduction at step %d", name, g, tr.Step)
			}
			if !slices.Equal(g.Before.RanksAnomalous, tr.Ranks) || !slices.Equal(g.After.RanksAnomalous, group) {
				t.Errorf("%s: anomalous before %v after %v, want %v and %v", name, g.Before.RanksAnomalous, g.After.RanksAnomalous, tr.Ranks, group)
			}
		}
	})
	// the all_reduce of finite gradients overflows: reduced gradients are
	// +Inf on every rank, unreduced ones finite everywhere
	t.Run("collective-overflow", func(t *testing.T) {
		spec := scenarioSpecNamed(t, "allreduce-overflow")
		run := generateSidecars(t, spec, Sidecars{MonitorOps: []string{"min", "max", "norm", "nans"}})
		tr := run.truth
		if got := monitorBadRanks(t, run.mon, "grad_unreduced", tr.Step); len(got) > 0 {
			t.Errorf("unreduced gradients non-finite on %v", got)
		}
		if got := monitorBadRanks(t, run.mon, "grad_reduced", tr.Step); !slices.Equal(got, tr.Ranks) {
			t.Errorf("reduced gradients non-finite on %v, want %v", got, tr.Ranks)
		}
		f := readMonitor(t, run)
		if f.Step != tr.Step || f.Stage != monitor.StageBackward {
			t.Errorf("monitor first anomaly at step %d (%s), truth step %d backward", f.Step, f.Stage, tr.Step)
		}
		g := f.Gradients
		if g == nil || g.Step != tr.Step || g.Where != monitor.GradAfterReduction || g.Weak {
			t.Fatalf("gradients %+v, want a strong anomaly after the reduction at step %d", g, tr.Step)
		}
		if len(g.Before.RanksAnomalous) > 0 || !slices.Equal(g.After.RanksAnomalous, tr.Ranks) {
			t.Errorf("anomalous before %v after %v, want none and %v", g.Before.RanksAnomalous, g.After.RanksAnomalous, tr.Ranks)
		}
		// with the default ops the Inf shows only as an infinite norm
		run = generateSidecars(t, spec, Sidecars{})
		if f := readMonitor(t, run); f.Step != tr.Step {
			t.Errorf("default ops: monitor first anomaly at step %d, truth step %d", f.Step, tr.Step)
		}
	})
}

func readMonitor(t *testing.T, run sidecarRun) monitor.Findings {
	t.Helper()
	r, err := monitor.Read(context.Background(), run.mon, monitor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := r.Findings()
	if f.WarningCount > 0 {
		t.Errorf("monitor warnings: %+v", f.Warnings)
	}
	if !f.Found {
		t.Fatal("the monitor output shows no anomaly")
	}
	if !slices.Equal(f.HeaderStyles, []string{monitor.StyleV1}) || !slices.Equal(f.Ranks, allRanks(run.spec.Ranks)) {
		t.Errorf("header styles %v, ranks %v", f.HeaderStyles, f.Ranks)
	}
	return f
}

// TestSidecarFiles checks the layout and the line formats.
func TestSidecarFiles(t *testing.T) {
	spec := scenarioSpecNamed(t, "log-negative")
	run := generateSidecars(t, spec, Sidecars{})
	b, err := os.ReadFile(run.log)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^ \[2026-11-29 10:00:\d\d\] iteration +(\d+)/ +4 \| consumed samples: +(\d+) \| ` +
		`elapsed time per iteration \(ms\): \d+\.\d \| learning rate: 1\.000000E-04 \| global batch size: +8 \| ` +
		`(lm loss: \d\.\d{6}E[+-]\d\d \| )?loss scale: 1\.0 \| grad norm: (\d+\.\d{3}|nan) \| ` +
		`number of skipped iterations: +0 \| number of nan iterations: +0 \|$`)
	its := 0
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if !strings.Contains(l, "iteration ") {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("iteration line %q", l)
		}
		its++
		if m[1] != strconv.Itoa(its) || m[2] != strconv.Itoa(8*its) {
			t.Errorf("iteration %s, consumed %s on line %d", m[1], m[2], its)
		}
		if bad := its-1 >= run.truth.Step; bad != (m[3] == "") || bad != (m[4] == "nan") {
			t.Errorf("step %d: loss %q grad norm %q", its-1, m[3], m[4])
		}
	}
	if its != 4 {
		t.Errorf("%d iteration lines, want 4", its)
	}

	folders, err := os.ReadDir(run.mon)
	if err != nil {
		t.Fatal(err)
	}
	if len(folders) != spec.Ranks {
		t.Fatalf("%d monitor folders, want %d", len(folders), spec.Ranks)
	}
	folderRe := regexp.MustCompile(`^Nov29_10-00-00-rank(\d)-[0-9a-f]{8}$`)
	actvRow := regexp.MustCompile(`^0,[a-z_.0-9]+\.(input|output)(_\d)?,\d,0,(\d+(\.\d+)?(e-\d\d)?|nan|inf),\d+\.0,("\[\d+(, \d+)+\]"|\[\d*\]),torch\.(float32|int64|bool)$`)
	for _, fd := range folders {
		if !folderRe.MatchString(fd.Name()) {
			t.Errorf("monitor folder %s", fd.Name())
		}
		files, _ := os.ReadDir(filepath.Join(run.mon, fd.Name()))
		var names []string
		for _, f := range files {
			names = append(names, f.Name())
		}
		var want []string
		for _, k := range []string{"actv", "grad_reduced", "grad_unreduced", "param_updated"} {
			for s := 0; s <= 3; s++ {
				want = append(want, fmt.Sprintf("%s_%d-%d.csv", k, s, s))
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s holds %v, want %v", fd.Name(), names, want)
		}
	}
	rank0 := filepath.Join(run.mon, folders[0].Name())
	actv, _ := os.ReadFile(filepath.Join(rank0, "actv_1-1.csv"))
	lines := strings.Split(strings.TrimSuffix(string(actv), "\n"), "\n")
	if lines[0] != "vpp_stage,name,step,micro_step,norm,nans,shape,dtype" {
		t.Errorf("actv header %q", lines[0])
	}
	for _, l := range lines[1:] {
		if !actvRow.MatchString(l) {
			t.Errorf("actv row %q", l)
		}
	}
	if want := "0,embed.input,1,0,"; !strings.HasPrefix(lines[1], want) {
		t.Errorf("first activation row %q, want the embedding input", lines[1])
	}
	grad, _ := os.ReadFile(filepath.Join(rank0, "grad_unreduced_1-1.csv"))
	lines = strings.Split(strings.TrimSuffix(string(grad), "\n"), "\n")
	if lines[0] != "vpp_stage,name,step,norm,nans,shape,dtype" {
		t.Errorf("grad header %q", lines[0])
	}
	params := sim.ParamNames(mustNormalized(t, spec), 0)
	var got []string
	for _, l := range lines[1:] {
		got = append(got, strings.Split(l, ",")[1])
	}
	if !slices.Equal(got, params) {
		t.Errorf("gradient rows %v, want the parameters in order %v", got, params)
	}
}

func mustNormalized(t *testing.T, s Spec) *Spec {
	t.Helper()
	n, err := s.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSidecarDumpUnchanged checks that the dump is the same, byte for
// byte, with and without sidecars.
func TestSidecarDumpUnchanged(t *testing.T) {
	for _, name := range []string{"sqrt-zero-backward", "cast-overflow"} {
		spec := scenarioSpecNamed(t, name)
		spec.MicroBatches = 2
		plain := t.TempDir()
		tr1, err := Generate(spec, plain)
		if err != nil {
			t.Fatal(err)
		}
		run := generateSidecars(t, spec, Sidecars{MonitorOps: []string{"min", "max", "mean", "norm", "nans"}})
		if h1, h2 := treeHash(t, plain), treeHash(t, run.dump); h1 != h2 {
			t.Errorf("%s: dump differs with sidecars", name)
		}
		if !reflect.DeepEqual(tr1, run.truth) {
			t.Errorf("%s: truth differs with sidecars:\n%+v\n%+v", name, tr1, run.truth)
		}
	}
}

// treeHash hashes the names and contents of every file under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\n", filepath.ToSlash(rel))
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestSidecarRefusesInsideDump checks that a sidecar folder inside the
// dump folder is refused before anything is written.
func TestSidecarRefusesInsideDump(t *testing.T) {
	spec := scenarioSpecNamed(t, "log-negative")
	root := t.TempDir()
	dump := filepath.Join(root, "run")
	for _, side := range []Sidecars{
		{LogDir: filepath.Join(dump, "logs")},
		{LogDir: dump},
		{MonitorDir: filepath.Join(dump, "step0", "mon")},
		{LogDir: filepath.Join(root, "logs"), MonitorDir: filepath.Join(root, "run", "..", "run", "m")},
		{MonitorDir: filepath.Join(root, "mon"), MonitorOps: []string{"norm", "median"}},
	} {
		if _, err := GenerateWith(spec, dump, side); err == nil {
			t.Errorf("%+v accepted", side)
		}
		if _, err := os.Stat(dump); err == nil {
			t.Fatalf("%+v: the dump folder was created", side)
		}
	}
	// a sibling whose name starts with the dump folder's is outside it
	if _, err := GenerateWith(spec, dump, Sidecars{LogDir: dump + "-logs"}); err != nil {
		t.Errorf("sibling log folder refused: %v", err)
	}
}
