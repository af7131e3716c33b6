package nonfinite

import (
	"encoding/json"
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Class
		ok   bool
	}{
		{"nan", NaN, true}, {"NaN", NaN, true}, {"-nan", NaN, true}, {"+NAN", NaN, true},
		{"inf", PosInf, true}, {"+Inf", PosInf, true}, {"Infinity", PosInf, true}, {"INFINITY", PosInf, true},
		{"-inf", NegInf, true}, {"-Infinity", NegInf, true},
		{"", 0, false}, {"na", 0, false}, {"nanx", 0, false}, {"1.5", 0, false}, {"infinit", 0, false},
		{"--inf", 0, false}, {"inff", 0, false}, {"+infinity0", 0, false},
	}
	for _, c := range cases {
		got, ok := ParseString(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestClassWords(t *testing.T) {
	cases := []struct {
		c          Class
		str, kind  string
		float      float64
		floatIsNaN bool
	}{
		{0, "finite", "", 0, false},
		{NaN, "nan", "nan", 0, true},
		{PosInf, "+inf", "inf", math.Inf(1), false},
		{NegInf, "-inf", "inf", math.Inf(-1), false},
		{NaN | NegInf, "nan,-inf", "nan", 0, true},
		{Inf, "+inf,-inf", "inf", 0, true},
	}
	for _, c := range cases {
		if got := c.c.String(); got != c.str {
			t.Errorf("%d.String() = %q, want %q", c.c, got, c.str)
		}
		if got := c.c.Kind(); got != c.kind {
			t.Errorf("%v.Kind() = %q, want %q", c.c, got, c.kind)
		}
		if back, ok := ParseClass(c.str); !ok || back != c.c {
			t.Errorf("ParseClass(%q) = %v, %v", c.str, back, ok)
		}
		f := c.c.Float()
		if c.floatIsNaN != math.IsNaN(f) || (!c.floatIsNaN && f != c.float) {
			t.Errorf("%v.Float() = %v", c.c, f)
		}
		if c.c != 0 && !c.floatIsNaN && Of(f) != c.c {
			t.Errorf("Of(%v) = %v, want %v", f, Of(f), c.c)
		}
	}
}

func TestNumberJSON(t *testing.T) {
	for _, n := range []Number{{}, {1.5, true}, {math.NaN(), true}, {math.Inf(1), true}, {math.Inf(-1), true}, {-0.25, true}} {
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		var back Number
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		same := back.Valid == n.Valid && (back.Value == n.Value || (math.IsNaN(back.Value) && math.IsNaN(n.Value)))
		if !same {
			t.Errorf("%v -> %s -> %v", n, b, back)
		}
	}
	var n Number
	if err := json.Unmarshal([]byte(`"-Infinity"`), &n); err != nil || !math.IsInf(n.Value, -1) {
		t.Errorf(`"-Infinity" -> %v, %v`, n, err)
	}
	if err := json.Unmarshal([]byte(`"x"`), &n); err == nil {
		t.Error(`"x" accepted`)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"nan", "-Infinity", "+inf", "1e309", "", "nAn"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := ParseString(s)
		// the oracle: the lower-cased word without its sign
		w := s
		neg := false
		if len(w) > 0 && (w[0] == '-' || w[0] == '+') {
			neg = w[0] == '-'
			w = w[1:]
		}
		lw := []byte(w)
		for i, b := range lw {
			if 'A' <= b && b <= 'Z' {
				lw[i] = b + 32
			}
		}
		var want Class
		wantOK := true
		switch string(lw) {
		case "nan":
			want = NaN
		case "inf", "infinity":
			want = PosInf
			if neg {
				want = NegInf
			}
		default:
			wantOK = false
		}
		if ok != wantOK || (ok && c != want) {
			t.Fatalf("ParseString(%q) = %v, %v; want %v, %v", s, c, ok, want, wantOK)
		}
	})
}
