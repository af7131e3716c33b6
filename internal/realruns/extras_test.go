package realruns

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// monitorFolder is how TrainerMon names a rank's folder.
var monitorFolder = regexp.MustCompile(`^[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}-rank(\d+)-[0-9a-f]{8}$`)

// The extra truth fields are read, and they agree with the archive: the
// monitor folder exists with one folder per rank, the recompute entries of
// every level are listed, the point-to-point calls name a consistent stage,
// and a level without collectives has none in its truth.
func TestExtras(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Scenarios() {
		tr := Truth(t, s)
		x := tr.Extras
		if x.Hidden != nil {
			seen["hidden"] = true
			if x.Hidden.Step != tr.Truth.Step || x.Hidden.By == "" || !strings.HasSuffix(x.Hidden.Reappears, ".backward") {
				t.Errorf("%s: hidden %+v", s, x.Hidden)
			}
		}
		if x.Monitor != nil {
			seen["monitor"] = true
			checkMonitorFolder(t, filepath.Join(Dir(t, s), x.Monitor.Folder), tr.WorldSize)
			if len(x.Monitor.BoolRows) == 0 || x.Monitor.First.Step != tr.Truth.Step {
				t.Errorf("%s: monitor %+v", s, x.Monitor)
			}
		}
		if c := x.Checkpoint; c != nil {
			seen["checkpoint"] = true
			for _, level := range tr.Levels {
				if len(c.Recompute[level]) == 0 {
					t.Errorf("%s: no recompute entries for level %s", s, level)
				}
			}
			if c.OriginForwardIsRecompute != slices.Contains(c.Recompute[tr.Levels[0]], c.OriginForward) {
				t.Errorf("%s: origin forward %s, recompute %v", s, c.OriginForward, c.OriginForwardIsRecompute)
			}
		}
		if x.CollectivesRecorded != nil && !*x.CollectivesRecorded {
			seen["no-collectives"] = true
			if tr.Truth.Carrier != nil || x.HiddenCarrier == nil || x.HiddenCarrier.Seen.Step != tr.Truth.Step+1 {
				t.Errorf("%s: carrier %+v, hidden carrier %+v", s, tr.Truth.Carrier, x.HiddenCarrier)
			}
		}
		if x.P2P != nil {
			seen["p2p"] = true
			checkP2P(t, s, tr)
		}
		if x.Ahead != nil {
			seen["ahead"] = true
			checkAhead(t, s, tr)
		}
		if len(x.CleanTraps) > 0 {
			seen["clean-traps"] = true
			checkCleanTraps(t, s, tr)
		}
		if b := x.UndumpedBirth; b != nil {
			seen["undumped-birth"] = true
			if slices.Contains(tr.StepsDumped, b.Step) || b.Step >= tr.Truth.Step || tr.Truth.Captured || b.LogLossNaNStep != b.Step {
				t.Errorf("%s: undumped birth %+v, steps dumped %v, truth %+v", s, b, tr.StepsDumped, tr.Truth)
			}
		}
	}
	for _, k := range []string{"hidden", "monitor", "checkpoint", "no-collectives", "p2p", "undumped-birth", "ahead", "clean-traps"} {
		if !seen[k] {
			t.Errorf("no scenario has the %s fields", k)
		}
	}
}

func checkMonitorFolder(t *testing.T, dir string, world int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ranks := map[string]bool{}
	for _, e := range ents {
		m := monitorFolder.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			t.Errorf("%s: not a TrainerMon rank folder", e.Name())
			continue
		}
		ranks[m[1]] = true
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "actv_0-4.csv")); err != nil {
			t.Error(err)
		}
	}
	if len(ranks) != world {
		t.Errorf("%s: %d rank folders, want %d", dir, len(ranks), world)
	}
}

func checkP2P(t *testing.T, s string, tr TruthFile) {
	t.Helper()
	stage := map[string]string{"activation": "forward", "gradient": "backward"}
	carrier := false
	for _, c := range tr.P2P.Calls {
		if stage[c.Carries] != c.Stage {
			t.Errorf("%s: %+v: stage does not match what it carries", s, c)
		}
		if c.Nonfinite && tr.Truth.Carrier != nil && c.Op == tr.Truth.Carrier.Op && slices.Contains(tr.Truth.Carrier.FromRanks, c.Rank) {
			carrier = true
		}
	}
	if tr.P2P.Step != tr.Truth.Step || !carrier {
		t.Errorf("%s: p2p step %d, carrier among the calls %v", s, tr.P2P.Step, carrier)
	}
}

// checkAhead: the climbing statistic has a value for every dumped step
// before the first non-finite one, rises at least 5 % a step over the 4
// steps before it, is within a factor 64 of its limit (5.5 for an exp's
// input) two steps before, and the first non-finite table agrees on the
// step; the monitor row climbs over the same steps.
func checkAhead(t *testing.T, s string, tr TruthFile) {
	t.Helper()
	a := tr.Ahead
	n := a.FirstNonfiniteStep
	if n < 5 || a.WarnByStep != n-2 || tr.Truth.Step != n || a.Dtype != "torch.float16" || len(a.Ranks) == 0 {
		t.Errorf("%s: ahead %+v, origin step %d", s, a, tr.Truth.Step)
	}
	floor := a.Limit / 64
	if a.Limit < 100 {
		floor = 5.5
	}
	checkClimb(t, s+" dump", a.Series, tr.StepsDumped, n, floor)
	if m := tr.MonitorClimb; m == nil {
		t.Errorf("%s: no monitor row", s)
	} else {
		checkClimb(t, s+" monitor "+m.File+" "+m.Name, m.Series, tr.StepsDumped, n, 0)
	}
	for level, steps := range tr.FirstNonfinite {
		for _, step := range tr.StepsDumped {
			for rank, name := range steps["step"+strconv.Itoa(step)] {
				if (name != nil) != (step >= n) {
					t.Errorf("%s %s step %d %s: first non-finite %v, ahead of step %d", s, level, step, rank, name, n)
				}
			}
		}
	}
}

func checkClimb(t *testing.T, what string, series map[string]float64, dumped []int, n int, floor float64) {
	t.Helper()
	at := func(step int) float64 {
		v, ok := series[strconv.Itoa(step)]
		if !ok || math.IsInf(v, 0) || math.IsNaN(v) {
			t.Errorf("%s: no finite value at step %d", what, step)
		}
		return v
	}
	for _, step := range dumped {
		if step < n {
			at(step)
		}
	}
	if len(series) != n {
		t.Errorf("%s: %d values, want one per step before %d", what, len(series), n)
	}
	for step := n - 3; step < n; step++ {
		if at(step) < 1.05*at(step-1) {
			t.Errorf("%s: step %d %g is not 5 %% above %g", what, step, at(step), at(step-1))
		}
	}
	if at(n-2) < floor {
		t.Errorf("%s: %g at step %d, below %g", what, at(n-2), n-2, floor)
	}
}

// checkCleanTraps: a clean run names every kind of trap, has no anomaly
// and no climbing statistic, and its only non-finite entry is the mask.
func checkCleanTraps(t *testing.T, s string, tr TruthFile) {
	t.Helper()
	var kinds []string
	mask := ""
	for _, c := range tr.CleanTraps {
		kinds = append(kinds, c.Trap)
		if c.NegInf {
			mask = c.Op
		}
	}
	slices.Sort(kinds)
	if want := []string{"bias", "flat-large", "fp16-max-fill", "mask", "spike"}; !slices.Equal(kinds, want) {
		t.Errorf("%s: traps %v, want %v", s, kinds, want)
	}
	if tr.Truth.Anomaly || tr.Ahead != nil || mask == "" {
		t.Errorf("%s: anomaly %v, ahead %+v, mask %q", s, tr.Truth.Anomaly, tr.Ahead, mask)
	}
	for level, steps := range tr.FirstNonfinite {
		for step, ranks := range steps {
			for rank, name := range ranks {
				if name == nil || *name != mask {
					t.Errorf("%s %s %s %s: first non-finite %v, want the mask %s", s, level, step, rank, name, mask)
				}
			}
		}
	}
}
