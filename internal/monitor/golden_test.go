package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files (and their generated inputs) in testdata")

// goldenCases are small generated monitor folders under testdata/<name>/
// whose Findings are kept in testdata/<name>.golden.
var goldenCases = []struct {
	name string
	opt  Options
	spec func() spec
	edit func(t *testing.T, dir string) // damage applied after generation
}{
	{
		name: "v1-forward-tp",
		opt:  Options{Groups: [][]int{{0, 1}, {2, 3}}},
		spec: func() spec {
			s := smallSpec()
			s.fault = forwardBorn(1, 1, 1, 1)
			return s
		},
	},
	{
		name: "v1old-after-reduction",
		spec: func() spec {
			s := smallSpec()
			s.style = StyleV1Old
			s.vpp = true
			s.fault = func(w where) *stats {
				if w.kind == kGradReduced && w.step >= 1 && w.mod == 1 {
					return st(nanStats)
				}
				if w.kind == kParamUpdated && w.step >= 1 {
					return st(nanStats)
				}
				return nil
			}
			return s
		},
	},
	{
		name: "v2-optimizer",
		spec: func() spec {
			s := smallSpec()
			s.style = StyleV2
			s.steps = []int{0, 1, 2, 3}
			s.fault = func(w where) *stats {
				switch w.kind {
				case kExpAvgSq:
					if w.step >= 2 && w.mod == 2 {
						return st(stats{min: 0, max: math.Inf(1), mean: math.Inf(1), norm: math.Inf(1), nans: 0, dtype: "torch.float32"})
					}
				case kParamUpdated:
					if w.step >= 1 && w.mod == 2 {
						return st(nanStats)
					}
				case kParamOrigin:
					if w.step >= 2 && w.mod == 2 {
						return st(nanStats)
					}
				case kActv:
					if w.step >= 2 && w.mod >= 2 && w.out {
						return st(nanStats)
					}
				}
				return nil
			}
			return s
		},
	},
	{
		name: "v1-damaged",
		spec: func() spec {
			s := smallSpec()
			s.kinds = []kind{kActv, kGradUnreduced, kGradReduced}
			s.fault = forwardBorn(3, 1, 0, 2)
			return s
		},
		edit: func(t *testing.T, dir string) {
			fd := filepath.Join(dir, "Dec03_21-34-40-rank0-1a2b3c4d")
			p := filepath.Join(fd, "actv_0-9.csv")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, []byte("0,0.self_attention.dense.output,1,0,0.5,bogus,1.0,0.0,\"[4, 8]\",torch.bfloat16\n0,0.self_attention.dense.out")...)
			os.WriteFile(p, b, 0o644)
			os.WriteFile(filepath.Join(fd, "grad_reduced_20-29.csv"), []byte("vpp_stage,name,step,norm,extra_metric,shape,dtype\n0,0.w,2,1.0,3,\"[2]\",torch.float32\n"), 0o644)
		},
	},
}

func smallSpec() spec {
	s := defaultSpec()
	s.steps = []int{0, 1, 2}
	s.mods = []module{{"0.input_layernorm", 1, 1}, {"0.self_attention.dense", 1, 2}, {"0.mlp.dense_4h_to_h", 1, 1}}
	s.params = []string{"0.input_layernorm.weight", "0.self_attention.dense.weight", "0.mlp.dense_4h_to_h.weight"}
	s.ops = []string{"min", "max", "norm", "nans"}
	s.perFile = 10
	return s
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("testdata", tc.name)
			golden := filepath.Join("testdata", tc.name+".golden")
			if *update {
				os.RemoveAll(dir)
				generate(t, dir, tc.spec())
				if tc.edit != nil {
					tc.edit(t, dir)
				}
			}
			r, err := Read(context.Background(), dir, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(r.Findings(), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("findings differ from %s (go test -update rewrites it):\n%s", golden, got)
			}
		})
	}
}
