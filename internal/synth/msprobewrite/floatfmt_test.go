package msprobewrite

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
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
		d       DType
		x, want float64
	}{
		{DTBFloat16, 2.6875, 2.6875},
		{DTBFloat16, 1.0 / 3, 0.333984375},
		{DTFloat16, 70000, math.Inf(1)},
		{DTFloat16, 65504, 65504},
		{DTFloat16, 0.1, 0.0999755859375},
		{DTFloat32, 0.1, 0.10000000149011612},
	}
	for _, c := range cases {
		if got := c.d.Round(c.x); got != c.want {
			t.Errorf("%v.round(%v) = %v, want %v", c.d, c.x, got, c.want)
		}
	}
}

// refPyFloat is the two-pass reference for appendPyFloat: exponent
// notation to find the exponent, then strconv's fixed notation.
func refPyFloat(x float64) string {
	if x == 0 {
		if math.Signbit(x) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(x, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	f := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(f, ".") {
		f += ".0"
	}
	return f
}

func TestPyFloatMatchesReference(t *testing.T) {
	g := rand.New(rand.NewPCG(1, 2))
	check := func(x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		if got, want := pyFloat(x), refPyFloat(x); got != want {
			t.Fatalf("pyFloat(%v) = %q, want %q", x, got, want)
		}
	}
	for e := -330; e <= 310; e++ {
		p := math.Pow(10, float64(e))
		for _, m := range []float64{1, 1.5, 9.999999999999999, 3.0000000000000004, 7} {
			check(m * p)
			check(-m * p)
		}
	}
	for i := 0; i < 200000; i++ {
		check(math.Float64frombits(g.Uint64()))
		check(float64(float32(g.NormFloat64() * math.Pow(10, float64(g.IntN(24)-8)))))
		check(float64(g.IntN(1 << 20)))
	}
}
