package ahead

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/climb"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"
)

// cpts are points at steps 0, 1, 2, …
func cpts(vals ...float64) []climb.Point {
	out := make([]climb.Point, len(vals))
	for i, v := range vals {
		out[i] = climb.Point{Step: i, Value: v}
	}
	return out
}

// follow feeds values to a track with a judge, as a reader does.
func follow(judge climb.Judge, vals ...float64) climb.Track {
	var t climb.Track
	for i, v := range vals {
		t.Add(climb.Point{Step: i, Value: v}, judge)
	}
	return t
}

// The window a reader shows is as long as the rule needs.
func TestWindowHoldsTheRule(t *testing.T) {
	if climb.Window < policy.AheadShown || climb.Window < policy.AheadPoints+policy.AheadGradHistory {
		t.Errorf("climb.Window %d is shorter than the rule reads", climb.Window)
	}
}

// The grad norm: exploding at twice a step, or past ten times its
// median, after the first steps; silent on a warm-up, a spike, flat
// values and a slow climb.
func TestJudgeGradNorm(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals []float64
		warn bool
		why  string
	}{
		{"doubling after a flat start", []float64{1, 1.1, 0.9, 1, 1, 2, 4.2, 9}, true, "exploding at ×2.12 a step"},
		{"ten times its median", []float64{1, 1.1, 0.9, 1, 1.2, 1, 0.95, 1.05, 1, 6, 9, 12}, true, "exploding: 12× its median of 1 before"},
		{"warm-up: a slow rise from the start", []float64{0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2}, false, ""},
		{"too early: doubling in the first steps", []float64{0.1, 0.2, 0.4, 0.8, 1.6}, false, ""},
		{"a spike of one step", []float64{1, 1, 1, 1, 1, 1, 50, 1}, false, ""},
		{"flat", []float64{2, 2, 2, 2, 2, 2, 2, 2}, false, ""},
		{"rising 20 % a step, within ten times its median", []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1.2, 1.44, 1.73}, false, ""},
		{"doubling then a fall at the last step", []float64{1, 1, 1, 1, 1, 2, 4, 3}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, why, ok := JudgeGradNorm(points(cpts(tc.vals...)))
			if ok != tc.warn || why != tc.why {
				t.Fatalf("warn %v (%q, %+v), want %v (%q)", ok, why, j, tc.warn, tc.why)
			}
			if ok && (j.StepsLeft <= 0 || math.IsInf(j.StepsLeft, 0)) {
				t.Errorf("steps left %v", j.StepsLeft)
			}
		})
	}
}

// The loss scale: three falls in a row, or two with the floor within
// reach; silent on one halving, a scale that halves and grows back, and
// falls apart.
func TestJudgeLossScale(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals []float64
		warn bool
		left float64
	}{
		{"halved at three steps in a row", []float64{65536, 65536, 32768, 16384, 8192}, true, 13},
		{"halved twice near the floor", []float64{32, 32, 16, 8}, true, 3},
		{"halved twice far from the floor", []float64{65536, 65536, 32768, 16384}, false, 0},
		{"one halving", []float64{65536, 65536, 32768, 32768, 32768}, false, 0},
		{"halvings apart: the normal cycle", []float64{65536, 32768, 32768, 65536, 32768, 32768, 16384, 16384}, false, 0},
		{"halves, then grows back", []float64{4096, 2048, 1024, 2048}, false, 0},
		{"flat at 1 (bf16)", []float64{1, 1, 1, 1, 1}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, ok := JudgeLossScale(points(cpts(tc.vals...)))
			if ok != tc.warn {
				t.Fatalf("warn %v (%+v), want %v", ok, j, tc.warn)
			}
			if ok && (math.Abs(j.StepsLeft-tc.left) > 0.01 || math.Abs(j.Growth-0.5) > 1e-9) {
				t.Errorf("steps left %v growth %v, want %v at 0.5", j.StepsLeft, j.Growth, tc.left)
			}
		})
	}
}

// The monitor's rule is the dump's, in the row's dtype; a row without one
// is judged in float16.
func TestMonitorJudge(t *testing.T) {
	climbing := cpts(7300, 14600, 29232)
	for _, tc := range []struct {
		dtype string
		w     []climb.Point
		warn  bool
	}{
		{"torch.float16", climbing, true},
		{"torch.float32", climbing, false},
		{"torch.bfloat16", cpts(1e37, 4e37, 1.6e38), true},
		{"", climbing, true},
		{"torch.int64", climbing, false},
		{"torch.float16", cpts(30000, 30100, 29900), false},
	} {
		if got := MonitorJudge(tc.dtype, "max", tc.w); got != tc.warn {
			t.Errorf("%q %v: warn %v, want %v", tc.dtype, tc.w, got, tc.warn)
		}
	}
}

// fired is a monitor series that fired on values, then read after.
func fired(rank int, op, kind, dtype string, vals []float64, after ...float64) climb.Series {
	tr := follow(func(w []climb.Point) bool { return MonitorJudge(dtype, "max", w) }, append(vals, after...)...)
	return climb.Series{Rank: rank, Op: op, Tensor: kind, Stat: "max", Dtype: dtype, Track: tr}
}

func intp(v int) *int { return &v }

// FromMonitor: one warning per module, kind and statistic with every
// rank; none after the monitor's first non-finite step or for a climb
// that came back down; a row without a dtype warns in float16 only when
// the monitor recorded nothing but float16, else it is a note.
func TestFromMonitor(t *testing.T) {
	// x4 a step: watched from 4000 at step 3, 2 steps from 65504
	climb16 := []float64{60, 250, 1000, 4000, 16000}
	for _, tc := range []struct {
		name   string
		series []climb.Series
		cut    *int
		dtypes []string
		want   string // "op kind stat ranks step", "" for none
		notes  int
	}{
		{"two ranks climbing", []climb.Series{fired(1, "fc", "actv", "torch.float16", climb16), fired(0, "fc", "actv", "torch.float16", climb16)}, nil, []string{"torch.float16"}, "fc actv max [0 1] 3", 0},
		{"fired after the monitor's NaN", []climb.Series{fired(0, "fc", "actv", "torch.float16", climb16)}, intp(3), nil, "", 0},
		{"fired before the monitor's NaN", []climb.Series{fired(0, "fc", "actv", "torch.float16", climb16)}, intp(4), nil, "fc actv max [0] 3", 0},
		{"came back down", []climb.Series{fired(0, "fc", "actv", "torch.float16", climb16, 15000, 200)}, nil, nil, "", 0},
		{"came back down after the NaN", []climb.Series{fired(0, "fc", "actv", "torch.float16", climb16, 15000, 200)}, intp(6), nil, "fc actv max [0] 3", 0},
		{"no dtype, a float16 run", []climb.Series{fired(0, "fc", "actv", "", climb16)}, nil, []string{"torch.float16"}, "fc actv max [0] 3", 0},
		{"no dtype, no run dtype", []climb.Series{fired(0, "fc", "actv", "", climb16)}, nil, nil, "", 1},
		{"no dtype, a mixed run", []climb.Series{fired(0, "fc", "actv", "", climb16)}, nil, []string{"torch.float16", "torch.float32"}, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, notes := FromMonitor(tc.series, tc.cut, tc.dtypes)
			got := ""
			if len(ws) > 1 {
				t.Fatalf("%d warnings: %+v", len(ws), ws)
			}
			if len(ws) == 1 {
				a := ws[0]
				got = fmt.Sprintf("%s %s %s %v %d", a.Op, a.Tensor, a.Stat, a.Ranks, a.Step)
				if a.Source != SourceMonitor || !strings.HasPrefix(a.Text, "the monitor's fc (actv) max") || a.Dtype != "torch.float16" {
					t.Errorf("warning %+v", a)
				}
			}
			if got != tc.want || len(notes) != tc.notes {
				t.Errorf("got %q with %d notes %v, want %q with %d", got, len(notes), notes, tc.want, tc.notes)
			}
		})
	}
}

// logSeries is a log series followed with LogJudge.
func logSeries(rank int, stat string, vals ...float64) climb.Series {
	tr := follow(func(w []climb.Point) bool { return LogJudge(stat, w) }, vals...)
	return climb.Series{Rank: rank, Op: stat, Stat: stat, Track: tr}
}

// FromLog: the grad norm and the loss scale, before their cutoffs, not
// once they came back.
func TestFromLog(t *testing.T) {
	explode := []float64{1, 1.1, 0.9, 1, 1, 2, 4.2, 9}
	halving := []float64{65536, 65536, 32768, 16384, 8192}
	for _, tc := range []struct {
		name              string
		series            climb.Series
		gradCut, scaleCut *int
		want              string // "stat step", "" for none
	}{
		{"exploding grad norm", logSeries(0, StatGradNorm, explode...), nil, nil, "grad_norm 6"},
		{"exploding grad norm at its NaN", logSeries(0, StatGradNorm, explode...), intp(6), nil, ""},
		{"exploding grad norm before its NaN", logSeries(0, StatGradNorm, explode...), intp(7), nil, "grad_norm 6"},
		{"exploding grad norm that came back", logSeries(0, StatGradNorm, append(explode, 12, 1)...), nil, nil, ""},
		{"a loss scale falling", logSeries(-1, StatLossScale, halving...), nil, nil, "loss_scale 4"},
		{"a loss scale falling past the grad norm's NaN", logSeries(-1, StatLossScale, halving...), intp(2), nil, "loss_scale 4"},
		{"a loss scale falling after a NaN loss", logSeries(-1, StatLossScale, halving...), nil, intp(3), ""},
		{"a loss scale that grows back", logSeries(0, StatLossScale, append(halving, 16384, 32768, 65536)...), nil, nil, ""},
		{"a loss scale that grows back part way", logSeries(0, StatLossScale, append(halving, 16384)...), nil, nil, "loss_scale 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := FromLog([]climb.Series{tc.series}, tc.gradCut, tc.scaleCut)
			got := ""
			if len(ws) == 1 {
				got = fmt.Sprintf("%s %d", ws[0].Stat, ws[0].Step)
				if ws[0].Source != SourceLog || ws[0].Ranks == nil || !strings.HasPrefix(ws[0].Text, "the log's ") {
					t.Errorf("warning %+v", ws[0])
				}
			}
			if got != tc.want || len(ws) > 1 {
				t.Errorf("got %q (%d warnings), want %q", got, len(ws), tc.want)
			}
		})
	}
}

// Merge keeps the dump's warnings and sorts all by steps left.
func TestMerge(t *testing.T) {
	dump := []verdict.Ahead{{Source: SourceDump, Op: "Torch.exp.0.forward", StepsLeft: 2}}
	side := []verdict.Ahead{{Source: SourceLog, Op: StatLossScale, StepsLeft: 7}, {Source: SourceMonitor, Op: "fc", StepsLeft: 1}}
	got := Merge(dump, side)
	if len(got) != 3 || got[0].Source != SourceMonitor || got[1].Source != SourceDump || got[2].Source != SourceLog {
		t.Errorf("merged %+v", got)
	}
	if m := Merge(nil); m == nil || len(m) != 0 {
		t.Errorf("Merge(nil) = %v, want []", m)
	}
}
