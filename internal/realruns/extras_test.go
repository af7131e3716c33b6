package realruns

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
		if b := x.UndumpedBirth; b != nil {
			seen["undumped-birth"] = true
			if slices.Contains(tr.StepsDumped, b.Step) || b.Step >= tr.Truth.Step || tr.Truth.Captured || b.LogLossNaNStep != b.Step {
				t.Errorf("%s: undumped birth %+v, steps dumped %v, truth %+v", s, b, tr.StepsDumped, tr.Truth)
			}
		}
	}
	for _, k := range []string{"hidden", "monitor", "checkpoint", "no-collectives", "p2p", "undumped-birth"} {
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
