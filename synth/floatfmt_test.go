package synth

import (
	"math"
	"testing"
)

func TestPyFloat(t *testing.T) {
	cases := []struct {
		x    float64
		want string
	}{
		{1.0, "1.0"},
		{0.1, "0.1"},
		{1e-05, "1e-05"},
		{0.0001, "0.0001"},
		{1e16, "1e+16"},
		{123456789012345.0, "123456789012345.0"},
		{-0.0016728510381653905, "-0.0016728510381653905"},
		{3.4028234663852886e+38, "3.4028234663852886e+38"},
		{1.5e20, "1.5e+20"},
		{1e15, "1000000000000000.0"},
		{0.0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{-2.5, "-2.5"},
		{5.960464477539063e-08, "5.960464477539063e-08"},
		{float64(float32(0.2633039057254791)), "0.2633039057254791"},
		{2.7939677238464355e-09, "2.7939677238464355e-09"},
		{65504, "65504.0"},
	}
	for _, c := range cases {
		if got := pyFloat(c.x); got != c.want {
			t.Errorf("pyFloat(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}

func TestDTypeRound(t *testing.T) {
	cases := []struct {
		d       dtype
		x, want float64
	}{
		{dtBF16, 2.6875, 2.6875},
		{dtBF16, 1.0 / 3, 0.333984375},
		{dtF16, 70000, math.Inf(1)},
		{dtF16, 65504, 65504},
		{dtF16, 0.1, 0.0999755859375},
		{dtF32, 0.1, 0.10000000149011612},
	}
	for _, c := range cases {
		if got := c.d.round(c.x); got != c.want {
			t.Errorf("%v.round(%v) = %v, want %v", c.d, c.x, got, c.want)
		}
	}
}
