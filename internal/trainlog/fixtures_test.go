package trainlog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// scenarioFacts is what a fixture scenario's README.md and
// ground_truth.json say about its train-log.
type scenarioFacts struct {
	originStep  int    // ground_truth.json origin.step
	phase       string // ground_truth.json origin.phase
	worldSize   int
	nanFrom     int      // README: local_loss ... NaN from step N
	paramsAfter int      // README: nonfinite_params after step N ..., -1 if not said
	paramNames  []string // and its names
}

var (
	readmeNaNFrom = regexp.MustCompile("`local_loss`[^.]*?NaN from step (\\d+)")
	readmeParams  = regexp.MustCompile("`nonfinite_params` after step (\\d+) is\\s+`(\\[[^`]*\\])`")
)

func loadScenario(t *testing.T, dir string) scenarioFacts {
	t.Helper()
	var gt struct {
		WorldSize int `json:"world_size"`
		Origin    struct {
			Step  int    `json:"step"`
			Phase string `json:"phase"`
		} `json:"origin"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "ground_truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &gt); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	f := scenarioFacts{originStep: gt.Origin.Step, phase: gt.Origin.Phase, worldSize: gt.WorldSize, paramsAfter: -1}
	m := readmeNaNFrom.FindSubmatch(readme)
	if m == nil {
		t.Fatalf("%s/README.md no longer says from which step local_loss is NaN", dir)
	}
	f.nanFrom, _ = strconv.Atoi(string(m[1]))
	if m := readmeParams.FindSubmatch(readme); m != nil {
		f.paramsAfter, _ = strconv.Atoi(string(m[1]))
		if err := json.Unmarshal(m[2], &f.paramNames); err != nil {
			t.Fatalf("README names: %v", err)
		}
	}
	return f
}

// TestFixtureTrainLogs reads the train-log/rank*.json of the real 4-rank
// runs and checks what the scenario's README and ground truth say.
func TestFixtureTrainLogs(t *testing.T) {
	root := fixtures(t)
	for _, tc := range []struct {
		scenario  string
		wantFirst int // the first step with a non-finite loss, as the README says
		wantHint  string
		wantNames []string // the names after the origin step, as the data holds them
	}{
		{"bwd-sqrt-zero-rank2-step5", 6, StageBackward, []string{"encoder.motion_scale"}},
		{"fwd-log-neg-rank2-step5", 5, StageForward, []string{"encoder.motion_scale", "encoder.proj.weight", "encoder.proj.bias"}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			dir := filepath.Join(root, tc.scenario)
			facts := loadScenario(t, dir)
			if facts.nanFrom != tc.wantFirst || facts.phase != tc.wantHint {
				t.Fatalf("the fixture changed: README says NaN from step %d, ground truth phase %q", facts.nanFrom, facts.phase)
			}
			paths, _ := filepath.Glob(filepath.Join(dir, "train-log", "rank*.json"))
			if len(paths) != facts.worldSize {
				t.Fatalf("%d train logs, world size %d", len(paths), facts.worldSize)
			}
			l := mustRead(t, paths, Options{})
			if len(l.Warnings) != 0 {
				t.Errorf("warnings: %v", l.Warnings)
			}
			allRanks := []int{0, 1, 2, 3}
			for i, f := range l.Files {
				if f.Format != FormatJSON || f.Rank != i || f.Records != 8 {
					t.Errorf("file %+v", f)
				}
			}
			s := l.Summary()
			f := s.FirstNonFiniteLoss
			if f == nil || f.Step != facts.nanFrom || f.Iteration != facts.nanFrom || f.Kind != "nan" || !slices.Equal(f.Ranks, allRanks) {
				t.Fatalf("first non-finite loss = %+v, want step %d on every rank", f, facts.nanFrom)
			}
			if s.FirstNonFinite != f || s.FirstNonFiniteGradNorm != nil {
				t.Errorf("first %+v grad %+v", s.FirstNonFinite, s.FirstNonFiniteGradNorm)
			}
			if s.LastFinite == nil || s.LastFinite.Step != facts.nanFrom-1 {
				t.Errorf("last finite %+v", s.LastFinite)
			}
			for _, r := range s.PerRank {
				if r.First == nil || r.First.Step != facts.nanFrom {
					t.Errorf("rank %d first %+v", r.Rank, r.First)
				}
			}
			p := s.FirstNonFiniteParams
			if p == nil || p.Step != facts.originStep || !slices.Equal(p.Ranks, allRanks) {
				t.Fatalf("first non-finite params = %+v, want after step %d", p, facts.originStep)
			}
			if !slices.Equal(p.Names, tc.wantNames) {
				t.Errorf("params names %v, want %v", p.Names, tc.wantNames)
			}
			if tc.scenario == "bwd-sqrt-zero-rank2-step5" && facts.paramsAfter < 0 {
				t.Error("the README no longer says which parameters were non-finite after step 5")
			}
			if facts.paramsAfter >= 0 && (p.Step != facts.paramsAfter || !slices.Equal(p.Names, facts.paramNames)) {
				t.Errorf("params %+v, README says after step %d: %v", p, facts.paramsAfter, facts.paramNames)
			}
			if s.StageHint != facts.phase {
				t.Errorf("stage hint %q (%s), ground truth phase %q", s.StageHint, s.StageReason, facts.phase)
			}
			if s.Mapping.Offset != 0 || s.SkippedTotal != 0 || s.NaNIterations != nil {
				t.Errorf("summary %s", jsonOf(t, s, ""))
			}
		})
	}
}
