package trace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/verdict"
)

// fixtures returns ../shared/fixtures, or skips when it is absent.
func fixtures(t *testing.T) string { return fixturedir.Dir(t) }

// groundTruth is the part of a scenario's ground_truth.json the verdict is
// checked against.
type groundTruth struct {
	Origin struct {
		Rank  int    `json:"rank"`
		Step  int    `json:"step"`
		Op    string `json:"op"`
		Phase string `json:"phase"`
		Value string `json:"value"`
	} `json:"origin"`
	FirstByRank map[string]string `json:"expected_first_nonfinite_entry_step5"`
}

var entryName = regexp.MustCompile(`[A-Za-z_]+\.[A-Za-z_]+\.\d+\.(forward|backward)`)

func TestVerdictMatchesGroundTruth(t *testing.T) {
	root := filepath.Join(fixtures(t), "msprobe-generated")
	scenarios, _ := filepath.Glob(filepath.Join(root, "*", "ground_truth.json"))
	if len(scenarios) == 0 {
		t.Fatalf("no scenario under %s", root)
	}
	for _, gtFile := range scenarios {
		data, err := os.ReadFile(gtFile)
		if err != nil {
			t.Fatal(err)
		}
		var gt groundTruth
		if err := json.Unmarshal(data, &gt); err != nil {
			t.Fatal(err)
		}
		wantKind := "nan"
		if strings.Contains(strings.ToLower(gt.Origin.Value), "inf") && !strings.HasPrefix(gt.Origin.Value, "NaN") {
			wantKind = "inf"
		}
		wantFirstNaN := ""
		if wantKind == "inf" {
			wantFirstNaN = entryName.FindString(gt.Origin.Value)
		}
		var carrierOp string
		var receivers []int
		for rk, op := range gt.FirstByRank {
			r, err := strconv.Atoi(strings.TrimPrefix(rk, "rank"))
			if err != nil {
				t.Fatal(err)
			}
			if r == gt.Origin.Rank {
				continue
			}
			carrierOp = op
			receivers = append(receivers, r)
		}
		sort.Ints(receivers)
		scenario := filepath.Base(filepath.Dir(gtFile))
		for _, level := range []string{"L1", "mix"} {
			t.Run(scenario+"/"+level, func(t *testing.T) {
				v, err := Run(context.Background(), Options{Path: filepath.Join(filepath.Dir(gtFile), level)})
				if err != nil {
					t.Fatal(err)
				}
				o := v.Origin
				if !v.Anomaly || o == nil {
					t.Fatalf("no anomaly found")
				}
				if o.Step != gt.Origin.Step || len(o.Ranks) != 1 || o.Ranks[0] != gt.Origin.Rank || o.Op != gt.Origin.Op ||
					o.Stage != gt.Origin.Phase || o.Kind != wantKind || !o.Captured || o.Tie {
					t.Errorf("origin = step %d ranks %v op %s stage %s kind %s captured %v tie %v; want step %d rank %d op %s stage %s kind %s",
						o.Step, o.Ranks, o.Op, o.Stage, o.Kind, o.Captured, o.Tie, gt.Origin.Step, gt.Origin.Rank, gt.Origin.Op, gt.Origin.Phase, wantKind)
				}
				if o.Confidence != "high" {
					t.Errorf("confidence %s (%v), want high", o.Confidence, o.Reasons)
				}
				switch {
				case wantFirstNaN == "" && v.FirstNaN != nil:
					t.Errorf("first_nan = %+v, want null", v.FirstNaN)
				case wantFirstNaN != "" && (v.FirstNaN == nil || v.FirstNaN.Op != wantFirstNaN || v.FirstNaN.Rank != gt.Origin.Rank):
					t.Errorf("first_nan = %+v, want %s on rank %d", v.FirstNaN, wantFirstNaN, gt.Origin.Rank)
				}
				c := v.Carrier
				if c == nil || c.Op != carrierOp || c.Step != gt.Origin.Step || !equalInts(c.FromRanks, []int{gt.Origin.Rank}) || !equalInts(c.ToRanks, receivers) {
					t.Errorf("carrier = %+v, want %s from %d to %v", c, carrierOp, gt.Origin.Rank, receivers)
				}
				if o.Code == nil || !strings.HasSuffix(o.Code.File, "train_nan.py") || o.Code.Line == 0 {
					t.Errorf("code = %+v, want a line of train_nan.py", o.Code)
				}
				if level == "mix" && (len(o.Chain) == 0 || o.Chain[len(o.Chain)-1] != "Module.encoder.FeatureEncoder.forward.0") {
					t.Errorf("chain = %v, want it to end at the FeatureEncoder module", o.Chain)
				}
				// step N+1 is read to see that the anomaly lasts, then the scan stops
				if len(v.Scanned.NotScanned) == 0 || v.Scanned.NotScanned[0] != gt.Origin.Step+2 {
					t.Errorf("not scanned = %v: the scan should stop after step %d", v.Scanned.NotScanned, gt.Origin.Step+1)
				}
				if len(v.Recovered) != 0 {
					t.Errorf("recovered = %+v, want none", v.Recovered)
				}
				if len(o.Outputs) == 0 || o.Outputs[0].Holds == "finite" {
					t.Errorf("origin outputs = %+v, want the non-finite output", o.Outputs)
				}
				checkStepStates(t, v, gt.Origin.Step, gt.Origin.Rank, gt.Origin.Op, carrierOp, receivers)
			})
		}
	}
}

// A dump taken too late (only steps 6-7 of the backward scenario): every
// rank first shows NaN in the same weight; the origin is not captured and
// lies in step 5's update.
func TestVerdictDumpTakenTooLate(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	v, err := Run(context.Background(), Options{Path: dir, Steps: map[int]bool{6: true, 7: true}})
	if err != nil {
		t.Fatal(err)
	}
	o := v.Origin
	if o == nil || o.Step != 6 || o.Captured || !o.Tie || o.Stage != "optimizer" || o.Confidence != "low" || len(o.Ranks) != 4 {
		t.Fatalf("origin = %+v, want step 6, not captured, a tie of all 4 ranks, stage optimizer, low confidence", o)
	}
	if o.Op != "Tensor.__mul__.0.forward" || o.Interval != nil {
		t.Errorf("op %s interval %+v: want the first call reading the weight, and no interval (nothing in step 6 made it)", o.Op, o.Interval)
	}
	if !strings.Contains(strings.Join(v.NextSteps, " "), "step 5") {
		t.Errorf("next steps do not send the user to step 5: %v", v.NextSteps)
	}
}

func TestRealDumpsHaveNoAnomaly(t *testing.T) {
	root := filepath.Join(fixtures(t), "msprobe-real")
	for _, name := range []string{"gpu-resnet50-mix-2steps", "megatron-npu-mix-v1stack", "mindspore-megatron-mix", "mix-no-framework-key"} {
		t.Run(name, func(t *testing.T) {
			v, err := Run(context.Background(), Options{Path: filepath.Join(root, name)})
			if err != nil {
				t.Fatal(err)
			}
			if v.Anomaly || v.Origin != nil {
				t.Fatalf("anomaly reported: %+v", v.Origin)
			}
			for _, w := range v.Warnings {
				if w.Offset != nil || strings.Contains(w.Message, "unreadable") {
					t.Errorf("warning on an intact dump: %+v", w)
				}
			}
			// clean and whole: the byte search clears every file
			if v.Scanned.Files == 0 || v.Scanned.Cleared != v.Scanned.Files {
				t.Errorf("files %d, cleared %d: want all cleared", v.Scanned.Files, v.Scanned.Cleared)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkStepStates: the picture's data says clean before the origin step,
// the source and the receivers at it, and nothing read after the next one.
func checkStepStates(t *testing.T, v *verdict.Verdict, step, source int, op, carrier string, receivers []int) {
	t.Helper()
	if len(v.Steps) == 0 {
		t.Fatal("no step states")
	}
	for _, st := range v.Steps {
		want := "clean"
		switch {
		case st.Step == step:
			want = "anomaly"
		case st.Step == step+1:
			want = "checked"
		case st.Step > step+1:
			want = "not_scanned"
		}
		if st.Status != want {
			t.Errorf("step %d status %s, want %s", st.Step, st.Status, want)
		}
		if st.Ranks != "0-3" {
			t.Errorf("step %d ranks %q, want 0-3", st.Step, st.Ranks)
		}
		if st.Step != step {
			continue
		}
		var got []int
		for _, rs := range st.Anomalous {
			switch {
			case rs.Rank == source:
				if rs.Role != "source" || rs.Op != op {
					t.Errorf("step %d rank %d = %+v, want source at %s", step, rs.Rank, rs, op)
				}
			case rs.Role != "received" || rs.Via != carrier:
				t.Errorf("step %d rank %d = %+v, want received through %s", step, rs.Rank, rs, carrier)
			default:
				got = append(got, rs.Rank)
			}
		}
		if !equalInts(got, receivers) {
			t.Errorf("receivers in the step state %v, want %v", got, receivers)
		}
	}
}
