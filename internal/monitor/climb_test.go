package monitor

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/ahead"
)

// writeMonitor writes files (name → content) into one TrainerMon rank
// folder of rank 0 and returns the monitor output folder.
func writeMonitor(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	rankDir := filepath.Join(dir, "Dec07_14-31-42-rank0-050b3315")
	if err := os.Mkdir(rankDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(rankDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// actvRows writes one activation row per step and micro-step: name, step,
// micro-step, min, max and dtype; values gives each step's (min, max) per
// micro-step.
func actvRows(name, dtype string, values [][][2]float64) string {
	var b strings.Builder
	for step, micros := range values {
		for m, v := range micros {
			fmt.Fprintf(&b, "0,%s,%d,%d,%g,%g,1.0,0.0,\"[2, 4]\",%s\n", name, step, m, v[0], v[1], dtype)
		}
	}
	return b.String()
}

func steps(vals ...[2]float64) [][][2]float64 {
	out := make([][][2]float64, len(vals))
	for i, v := range vals {
		out[i] = [][2]float64{v}
	}
	return out
}

const actvHeader = "vpp_stage,name,step,micro_step,min,max,norm,nans,shape,dtype\n"

// The max and min of every row are followed step after step with the
// judge given: micro-steps fold into the step's extreme, integer rows are
// not followed, a non-finite value ends a series, a header without dtype
// gives series without one.
func TestClimbs(t *testing.T) {
	// x4 a step: watched from 4000 at step 2, 2 steps from 65504, whatever
	// the rule's horizon; its first micro-step alone (1100) would not warn
	climbing := [][][2]float64{
		{{0, 200}, {0, 250}}, {{0, 900}, {0, 1000}}, {{0, 1100}, {0, 4000}}, {{0, 16000}, {0, 15000}}, {{0, 17500}, {0, 17000}},
	}
	falling := steps([2]float64{-250, 0}, [2]float64{-1000, 0}, [2]float64{-4000, 0}, [2]float64{-16000, 0}, [2]float64{-17500, 0})
	ints := steps([2]float64{0, 900}, [2]float64{0, 2100}, [2]float64{0, 4300}, [2]float64{0, 8700}, [2]float64{0, 17500})
	// a NaN at step 3 between a slow start and a climb that would warn
	nanAt3 := ""
	for step, v := range []string{"300", "600", "1200", "nan", "5000", "20000"} {
		nans := "0.0"
		if v == "nan" {
			nans = "4.0"
		}
		nanAt3 += fmt.Sprintf("0,drop.output,%d,0,0,%s,1.0,%s,\"[2, 4]\",torch.float16\n", step, v, nans)
	}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		want   []string // "op kind stat dtype step value", at the step it fired
		dtypes []string
	}{
		{"a float16 output climbing over micro-steps", map[string]string{"actv_0-4.csv": actvHeader + actvRows("fc.output", "torch.float16", climbing)},
			[]string{"fc.output actv max torch.float16 2 4000"}, []string{"torch.float16"}},
		{"a min falling towards -65504", map[string]string{"actv_0-4.csv": actvHeader + actvRows("fc.output", "torch.float16", falling)},
			[]string{"fc.output actv min torch.float16 2 -4000"}, []string{"torch.float16"}},
		{"the same climb in float32", map[string]string{"actv_0-4.csv": actvHeader + actvRows("fc.output", "torch.float32", climbing)}, nil, []string{"torch.float32"}},
		{"integer rows", map[string]string{"actv_0-4.csv": actvHeader + actvRows("embed.input", "torch.int64", ints)}, nil, []string{}},
		{"a NaN ends the series", map[string]string{"actv_0-4.csv": actvHeader + nanAt3}, nil, []string{"torch.float16"}},
		{"an old header without dtype", map[string]string{"grad_reduced_0-4.csv": "param_name,step,min,max,norm\n" +
			"fc.weight,0,0,250,1\nfc.weight,1,0,1000,1\nfc.weight,2,0,4000,1\nfc.weight,3,0,16000,1\nfc.weight,4,0,17000,1\n"},
			[]string{"fc.weight grad_reduced max  2 4000"}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := Read(context.Background(), writeMonitor(t, tc.files), Options{Ahead: ahead.MonitorJudge})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range run.Climbs() {
				last := c.Fired[len(c.Fired)-1]
				got = append(got, fmt.Sprintf("%s %s %s %s %d %g", c.Op, c.Tensor, c.Stat, c.Dtype, last.Step, last.Value))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("climbs %q, want %q", got, tc.want)
			}
			if d := run.Dtypes(); !slices.Equal(d, tc.dtypes) {
				t.Errorf("dtypes %v, want %v", d, tc.dtypes)
			}
		})
	}
}

// Without a judge nothing is followed.
func TestClimbsNeedAJudge(t *testing.T) {
	dir := writeMonitor(t, map[string]string{"actv_0-4.csv": actvHeader + actvRows("fc.output", "torch.float16",
		steps([2]float64{0, 1000}, [2]float64{0, 2100}, [2]float64{0, 4300}, [2]float64{0, 8700}, [2]float64{0, 17500}))})
	run, err := Read(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := run.Climbs(); c != nil {
		t.Errorf("climbs %v without a judge", c)
	}
}

// parseDecimal reads what it accepts as strconv.ParseFloat does, bit for
// bit, and leaves the rest to it.
func TestParseDecimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	cases := []string{"0", "0.0", "-0.0", "44000.0", "65504.0", "1.5e+04", "-3.299409", "0.000123", "1e-7", "5.3e+36",
		"123456789012345", "1234567890123456", "1e23", "1e-23", "+7", ".5", "5.", "1e", "1e+", "1.2.3", "nan", "", "-", "1e1000", "0.1e-22"}
	for range 20000 {
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		for _, fmtc := range []byte{'g', 'f', 'e'} {
			prec := rng.IntN(17) - 1
			if fmtc == 'f' && math.Abs(f) > 1e30 {
				continue
			}
			cases = append(cases, strconv.FormatFloat(f*math.Pow(10, -float64(math.Ilogb(f))/3.3219*float64(rng.IntN(2))), fmtc, prec, 64))
		}
	}
	for _, c := range cases {
		v, ok := parseDecimal([]byte(c))
		if !ok {
			continue
		}
		want, err := strconv.ParseFloat(c, 64)
		if err != nil || math.Float64bits(v) != math.Float64bits(want) {
			t.Errorf("%q: %v, ParseFloat %v (%v)", c, v, want, err)
		}
	}
}
