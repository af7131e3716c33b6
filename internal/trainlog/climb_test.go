package trainlog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/ahead"
)

// megScaleLine is a Megatron-LM line with a loss scale; a skipped
// iteration prints no grad norm.
func megScaleLine(iter int, scale float64, grad string, skipped int) string {
	s := fmt.Sprintf(" [2024-05-01 10:00:00] iteration %s/     100 | consumed samples:           72 | lm loss: 2.500000E+00 | loss scale: %.1f |", pad(iter), scale)
	if skipped == 0 {
		s += " grad norm: " + grad + " |"
	}
	return s + fmt.Sprintf(" number of skipped iterations: %s | number of nan iterations:   0 |\n", pad3(skipped))
}

// megatronScales writes a Megatron-LM log of the scales, one per
// iteration from 1 (the first skipFirst and a fall from the one before are
// skipped iterations), and grad norms (1.000 when not given).
func megatronScales(scales []float64, grads []string, skipFirst int) string {
	var b strings.Builder
	for i, sc := range scales {
		skipped := 0
		if i < skipFirst || (i > 0 && sc < scales[i-1]) {
			skipped = 1
		}
		g := "1.000"
		if i < len(grads) {
			g = grads[i]
		}
		b.WriteString(megScaleLine(i+1, sc, g, skipped))
	}
	return b.String()
}

// climbsText lists the series that fired: "grad_norm rank -1 step 7".
func climbsText(l *Log) string {
	var out []string
	for _, c := range l.Climbs() {
		out = append(out, fmt.Sprintf("%s rank %d step %d", c.Stat, c.Rank, c.Fired[len(c.Fired)-1].Step))
	}
	return strings.Join(out, "; ")
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// jsonScales is a JSON log of one rank whose records print the scales at
// steps 0, 1, … (a fall is a skipped step).
func jsonScales(scales ...float64) string {
	var recs []string
	for i, sc := range scales {
		skipped := i > 0 && sc < scales[i-1]
		recs = append(recs, fmt.Sprintf(`{"step": %d, "local_loss": 1.5, "skipped": %v, "loss_scale": %.1f, "next_loss_scale": 1.0}`, i, skipped, sc))
	}
	return `{"rank": 1, "steps": [` + strings.Join(recs, ", ") + "]}"
}

// deepSpeedScales writes DeepSpeed engine lines: a progress line per
// step 1..steps, and an overflow line before the steps in overflows.
func deepSpeedScales(steps int, overflows map[int][2]int) string {
	var b strings.Builder
	skipped := 0
	for i := 1; i <= steps; i++ {
		if o, ok := overflows[i]; ok {
			skipped++
			fmt.Fprintf(&b, "[2023-07-24 13:21:32,001] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d\n", o[0], o[1])
		}
		fmt.Fprintf(&b, "[2023-07-24 13:21:31,001] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=%d, lr=[1e-05], mom=[(0.9, 0.999)]\n", i, skipped)
	}
	return b.String()
}

// The loss scale and the grad norm are followed with the rule of package
// ahead in every format, in dump steps.
func TestClimbs(t *testing.T) {
	explode := []string{"1.000", "1.100", "0.900", "1.000", "1.000", "2.000", "4.200", "9.000", "nan"}
	for _, tc := range []struct {
		name, file, content string
		want                string
	}{
		{"Megatron: halved at three iterations in a row", "train.log",
			megatronScales([]float64{65536, 65536, 65536, 32768, 16384, 8192, 8192}, nil, 0), "loss_scale rank -1 step 5"},
		{"Megatron: the initial search halves from the start", "train.log",
			megatronScales([]float64{2147483648, 1073741824, 536870912, 268435456, 268435456, 268435456}, nil, 1), ""},
		{"Megatron: halvings apart", "train.log",
			megatronScales([]float64{65536, 65536, 32768, 32768, 32768, 16384, 16384, 16384, 8192, 8192}, nil, 0), ""},
		{"Megatron: an exploding grad norm before its NaN", "train.log", megatronScales(repeat(65536, 9), explode, 0), "grad_norm rank -1 step 6"},
		{"Megatron: a warm-up", "train.log", megatronScales(repeat(1, 9), []string{"0.5", "0.6", "0.7", "0.8", "0.9", "1.0", "1.1", "1.2", "1.3"}, 0), ""},
		{"DeepSpeed: overflows at consecutive steps", "rank0.log",
			deepSpeedScales(7, map[int][2]int{4: {65536, 32768}, 5: {32768, 16384}, 6: {16384, 8192}}), "loss_scale rank 0 step 5"},
		{"DeepSpeed: overflows apart", "rank0.log",
			deepSpeedScales(40, map[int][2]int{10: {65536, 32768}, 20: {32768, 16384}, 30: {16384, 8192}}), ""},
		{"DeepSpeed: overflows from the start", "rank0.log",
			deepSpeedScales(4, map[int][2]int{1: {65536, 32768}, 2: {32768, 16384}, 3: {16384, 8192}}), ""},
		{"JSON: a loss_scale key", "rank1.json", jsonScales(65536, 65536, 32768, 16384, 8192), "loss_scale rank 1 step 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := mustRead(t, writeFiles(t, tc.file, tc.content), Options{Ahead: ahead.LogJudge})
			if got := climbsText(l); got != tc.want {
				t.Errorf("climbs %q, want %q", got, tc.want)
			}
		})
	}
}

// The loss scale each format prints is read into the record; without a
// judge nothing is followed.
func TestLossScaleRead(t *testing.T) {
	l := mustRead(t, writeFiles(t, "train.log", megatronScales([]float64{65536, 32768}, nil, 0),
		"rank0.json", jsonScales(512, 256),
		"ds.log", deepSpeedScales(1, map[int][2]int{1: {65536, 32768}})), Options{})
	var got []string
	for _, r := range l.Records {
		got = append(got, r.LossScale.String())
	}
	if want := "65536 32768 512 256 32768"; strings.Join(got, " ") != want {
		t.Errorf("loss scales %v, want %s", got, want)
	}
	if l.Climbs() != nil {
		t.Errorf("climbs %v without a judge", l.Climbs())
	}
}
