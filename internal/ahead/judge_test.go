package ahead

import (
	"math"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"
)

func series(vals ...float64) []verdict.Point {
	out := make([]verdict.Point, len(vals))
	for i, v := range vals {
		out[i] = verdict.Point{Step: i, Value: v}
	}
	return out
}

// The rule on the series it must warn about and those it must stay
// silent on.
func TestJudge(t *testing.T) {
	const fp16 = 65504.0
	expLimit := math.Log(fp16)
	for _, tc := range []struct {
		name   string
		points []verdict.Point
		limit  float64
		linear bool
		warn   bool
		left   float64 // steps left, when it warns (±0.05)
	}{
		{"float16 doubling, two steps before it overflows", series(7300, 14600, 29232), fp16, false, true, 1.16},
		{"float16 doubling, far from the limit", series(100, 200, 400), fp16, false, false, 0},
		{"float16 doubling, within 64 and 3 steps", series(256, 512, 1024), fp16, false, false, 0},
		{"float16 slow growth close to the limit", series(18000, 19800, 21780), fp16, false, true, 11.6},
		{"large but flat", series(30000, 30100, 29900), fp16, false, false, 0},
		{"a mask bias", series(-10000, -10000, -10000), fp16, false, false, 0},
		{"a spike that recovers is seen as one rise", series(20000, 20000, 40000), fp16, false, false, 0},
		{"rising towards -65504", series(-10000, -20000, -40000), fp16, false, true, 0.71},
		{"exp input rising", series(4.4, 5.5, 10.7), expLimit, true, true, 0.12},
		{"exp input rising slowly far off", series(3.0, 3.2, 3.4), expLimit, true, false, 0},
		{"exp input flat near the limit", series(10.5, 10.5, 10.6), expLimit, true, false, 0},
		{"two points only", series(20000, 40000), fp16, false, false, 0},
		{"steps skipped: the pace is per step", []verdict.Point{{Step: 0, Value: 8000}, {Step: 2, Value: 16000}, {Step: 4, Value: 32000}}, fp16, false, true, 2.07},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, ok := Judge(tc.points, tc.limit, tc.linear)
			if ok != tc.warn {
				t.Fatalf("warn %v (%+v), want %v", ok, j, tc.warn)
			}
			if ok && math.Abs(j.StepsLeft-tc.left) > 0.05 {
				t.Errorf("steps left %.3f, want %.2f", j.StepsLeft, tc.left)
			}
		})
	}
}
