package reference

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/trace"
)

// aheadRun writes a run whose statistics climb, stay flat, spike, fill and
// mask at random, in every dtype, some entries long enough to span the
// fast path's read windows, and returns its folder.
func aheadRun(t *testing.T, rng *rand.Rand) string {
	t.Helper()
	dir := t.TempDir()
	steps, ranks := 3+rng.IntN(4), 1+rng.IntN(3)
	compact := rng.IntN(4) == 0 // a layout other than json.dump(indent)
	dtypes := []string{"torch.float16", "torch.float16", "torch.bfloat16", "torch.float32", "torch.int64"}
	type series struct {
		op, dtype string
		start     float64
		factor    float64
		long      int // extra tensors before the climbing one
	}
	var all []series
	for i := range 6 + rng.IntN(6) {
		dt := dtypes[rng.IntN(len(dtypes))]
		start := []float64{1e3, 9000, 20000, 1e35, 3e36, -15000, 40000, 9000, 20000}[rng.IntN(9)]
		op := fmt.Sprintf("Functional.linear.%d.forward", i)
		if rng.IntN(3) == 0 {
			op = fmt.Sprintf("Torch.exp.%d.forward", i)
			start = []float64{3, 5.5, 6, 40, 60}[rng.IntN(5)]
		}
		all = append(all, series{op, dt, start, []float64{1, 1.02, 1.06, 1.3, 1.3, 2, 2, 3, 0.9}[rng.IntN(9)], []int{0, 0, 0, 0, 0, 0, 0, 6000}[rng.IntN(8)]})
	}
	for s := range steps {
		for r := range ranks {
			data := map[string]any{}
			order := []string{}
			for _, sr := range all {
				v := sr.start
				for range s {
					if strings.Contains(sr.op, "exp") {
						v += (sr.factor - 1) * 10
					} else {
						v *= sr.factor
					}
				}
				if r == 1 {
					v *= 0.9
				}
				tensor := func(max, min float64, dt string) map[string]any {
					if dt == "torch.float16" && math.Abs(max) >= 1024 {
						max = math.Round(max) // float16 holds whole numbers there
					}
					return map[string]any{"type": "torch.Tensor", "dtype": dt, "shape": []int{4}, "Max": pyFloat(max), "Min": pyFloat(min), "Mean": pyFloat(0), "Norm": pyFloat(1), "requires_grad": false}
				}
				var ins []any
				for k := range sr.long {
					ins = append(ins, tensor(float64(k%7), -1, "torch.float32"))
				}
				ins = append(ins, tensor(v, -1, sr.dtype))
				data[sr.op] = map[string]any{"input_args": ins, "input_kwargs": map[string]any{}, "output": []any{tensor(1, 0, "torch.float16")}}
				order = append(order, sr.op)
			}
			writeOrdered(t, filepath.Join(dir, fmt.Sprintf("step%d", s), fmt.Sprintf("rank%d", r)), data, order, compact)
		}
	}
	return dir
}

// pyFloat is a float as Python's json writes it: 44000.0, 5.3e+36.
type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if a := math.Abs(v); a != 0 && (a >= 1e16 || a < 1e-4) {
		return []byte(strconv.FormatFloat(v, 'e', -1, 64)), nil
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return []byte(s), nil
}

// writeOrdered writes dump.json with its entries in order, as
// json.dump(indent=1) does (compact: the whole document on one line), and
// empty side files.
func writeOrdered(t *testing.T, dir string, data map[string]any, order []string, compact bool) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("{\n \"task\": \"statistics\",\n \"level\": \"L1\",\n \"data\": {\n")
	for i, op := range order {
		v, err := json.MarshalIndent(data[op], "  ", " ")
		if compact {
			v, err = json.Marshal(data[op])
		}
		if err != nil {
			t.Fatal(err)
		}
		sep := ","
		if i == len(order)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  %q: %s%s\n", op, v, sep)
	}
	b.WriteString(" }\n}\n")
	doc := b.String()
	if compact {
		doc = strings.Join(strings.Fields(doc), " ") // one line, as json.dumps without indent
	}
	for name, body := range map[string]string{"dump.json": doc, "stack.json": "{}", "construct.json": "{}"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The fast path's warnings before the NaN are the reference's on random
// runs of climbing, flat, falling, filled and long series.
func TestDifferentialAhead(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	warned := 0
	for i := range 10 {
		dir := aheadRun(t, rng)
		ref, err := Analyse(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		v, err := trace.Run(context.Background(), trace.Options{Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		warned += len(ref.Ahead)
		for _, l := range Diff(ref, FromTrace(v)) {
			t.Errorf("run %d: %s", i, l)
		}
	}
	if warned < 5 {
		t.Errorf("%d warnings over the runs: too few to test the rule", warned)
	}
}

// A dump.json of another layout than json.dump(indent) (each entry on one
// line) gets the warnings an indented one gets: an exp input and a
// float16 value climbing, against the reference.
func TestDifferentialAheadCompact(t *testing.T) {
	for _, compact := range []bool{false, true} {
		dir := t.TempDir()
		for s, v := range []float64{6, 8, 10, 10.8} {
			tensor := func(max float64, dt string) map[string]any {
				return map[string]any{"type": "torch.Tensor", "dtype": dt, "shape": []int{4}, "Max": pyFloat(max), "Min": pyFloat(-1), "Mean": pyFloat(0), "Norm": pyFloat(1), "requires_grad": false}
			}
			data := map[string]any{
				"Torch.exp.0.forward":         map[string]any{"input_args": []any{tensor(v, "torch.float16")}, "input_kwargs": map[string]any{}, "output": []any{tensor(1, "torch.float16")}},
				"Functional.linear.0.forward": map[string]any{"input_args": []any{tensor(1, "torch.float16")}, "input_kwargs": map[string]any{}, "output": []any{tensor(3000*float64(int(1)<<s), "torch.float16")}},
			}
			writeOrdered(t, filepath.Join(dir, fmt.Sprintf("step%d", s), "rank0"), data, []string{"Torch.exp.0.forward", "Functional.linear.0.forward"}, compact)
		}
		ref, err := Analyse(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		v, err := trace.Run(context.Background(), trace.Options{Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		if len(ref.Ahead) != 2 {
			t.Errorf("compact %v: the reference gives %+v, want the exp input and the linear output", compact, ref.Ahead)
		}
		for _, l := range Diff(ref, FromTrace(v)) {
			t.Errorf("compact %v: %s", compact, l)
		}
	}
}
