package trainlog

import (
	"math"
	"testing"
)

func TestParseValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kind Kind
		v    float64
	}{
		{"nan", NaN, 0}, {"NaN", NaN, 0}, {"NAN", NaN, 0}, {"-nan", NaN, 0}, {"+nan", NaN, 0},
		{"inf", PosInf, 0}, {"INF", PosInf, 0}, {"+inf", PosInf, 0}, {"Infinity", PosInf, 0},
		{"-inf", NegInf, 0}, {"-INF", NegInf, 0}, {"-Infinity", NegInf, 0},
		{"7.123456E+00", Finite, 7.123456}, {"1.000000E+38", Finite, 1e38}, {"0", Finite, 0},
		{".5", Finite, 0.5}, {"5.", Finite, 5}, {"-2.5e-3", Finite, -0.0025}, {"1e999", PosInf, 0},
		{"-1e999", NegInf, 0}, {"1e-999", Finite, 0},
		{"", Absent, 0}, {"abc", Absent, 0}, {"1e", Absent, 0}, {"1.2.3", Absent, 0}, {".", Absent, 0},
		{"nanx", Absent, 0}, {"infinit", Absent, 0}, {"0x10", Absent, 0}, {"1_000", Absent, 0}, {"--1", Absent, 0},
		{"inf,", Absent, 0},
	} {
		got := parseValue([]byte(tc.in))
		if got.Kind != tc.kind {
			t.Errorf("parseValue(%q).Kind = %v, want %v", tc.in, got.Kind, tc.kind)
			continue
		}
		if tc.kind == Finite && math.Abs(got.V-tc.v) > 1e-12*math.Max(1, math.Abs(tc.v)) {
			t.Errorf("parseValue(%q) = %v, want %v", tc.in, got.V, tc.v)
		}
	}
}

func TestValueJSON(t *testing.T) {
	for _, tc := range []struct {
		v    Value
		want string
	}{
		{Value{}, "null"}, {Value{Finite, 2.5}, "2.5"}, {floatValue(math.NaN()), `"nan"`},
		{floatValue(math.Inf(1)), `"inf"`}, {floatValue(math.Inf(-1)), `"-inf"`},
	} {
		b, err := tc.v.MarshalJSON()
		if err != nil || string(b) != tc.want {
			t.Errorf("%v.MarshalJSON() = %s, %v; want %s", tc.v, b, err, tc.want)
		}
	}
}

func TestParseCount(t *testing.T) {
	for _, tc := range []struct {
		in string
		n  int
		ok bool
	}{
		{"0", 0, true}, {"42", 42, true}, {"1000000000000000", maxCount, true},
		{"1000000000000001", 0, false}, {"99999999999999999999999", 0, false}, {"", 0, false}, {"-1", 0, false}, {"1.0", 0, false},
	} {
		n, ok := parseCount([]byte(tc.in))
		if n != tc.n || ok != tc.ok {
			t.Errorf("parseCount(%q) = %d, %v; want %d, %v", tc.in, n, ok, tc.n, tc.ok)
		}
	}
}
