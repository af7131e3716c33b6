package monitor

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// This file writes monitor output the way TrainerMon and monitor_v2 do:
// pandas to_csv (header once, no index column), values rounded, NaN as
// "nan", infinities as "inf"/"-inf", counts as floats ("0.0"), shapes as
// quoted Python lists and dtypes as torch.<name>.

// pyFloat formats a float like Python's repr (as pandas writes it).
func pyFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	a := math.Abs(v)
	if v == math.Trunc(v) && a < 1e16 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	if a >= 1e-4 && a < 1e16 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'e', -1, 64)
}

// stats are one tensor's statistics.
type stats struct {
	min, max, mean, norm, nans float64
	shape                      string // "" → "[4, 8]"
	dtype                      string
}

func (s stats) op(op string) string {
	switch op {
	case "min":
		return pyFloat(s.min)
	case "max":
		return pyFloat(s.max)
	case "mean":
		return pyFloat(s.mean)
	case "norm":
		return pyFloat(s.norm)
	case "nans":
		return pyFloat(s.nans)
	case "zeros":
		return "0.0"
	case "id":
		return "nan"
	case "shape":
		if s.shape == "" {
			return `"[4, 8]"`
		}
		if s.shape == "nan" {
			return "nan"
		}
		return `"` + s.shape + `"`
	case "dtype":
		if s.dtype == "" {
			return "torch.bfloat16"
		}
		return s.dtype
	}
	panic(op)
}

func clean(seed int) stats {
	f := float64(seed%7+1) / 8
	return stats{min: -f, max: f * 2, mean: math.Round(f*1e6/3) / 1e6, norm: 12.5 + f, nans: 0}
}

var (
	nanStats    = stats{min: math.NaN(), max: math.NaN(), mean: math.NaN(), norm: math.NaN(), nans: 3}
	posInfStats = stats{min: -1, max: math.Inf(1), mean: math.Inf(1), norm: math.Inf(1)}
	placeholder = stats{min: math.NaN(), max: math.NaN(), mean: math.NaN(), norm: math.NaN(), nans: math.NaN(), shape: "nan", dtype: "nan"}
)

// module is a monitored module with its number of input and output tensors.
type module struct {
	name      string
	ins, outs int
}

// where tells a fault function which tensor is being written.
type where struct {
	kind   kind
	rank   int
	step   int
	micro  int // -1 when the file has none
	mod    int // module index, or parameter index
	name   string
	tensor string // "input", "output_1", "" for parameters
	out    bool   // the module's output (forward) or input gradient (backward)
}

// spec describes a generated run.
type spec struct {
	style    string // StyleV1, StyleV1Old, StyleV2
	ranks    int
	steps    []int
	micro    int // micro-steps per step
	mods     []module
	params   []string
	ops      []string // v1 ops in config order
	kinds    []kind   // files written
	mbsGrad  bool     // grad_unreduced has micro_step
	vpp      bool     // old style: names carry "0:" (vpp_stage column)
	perFile  int      // steps per file (step_count_per_record)
	fault    func(w where) *stats
	skipRank func(rank int, k kind) bool
}

func defaultSpec() spec {
	return spec{
		style: StyleV1,
		ranks: 4,
		steps: []int{0, 1, 2, 3},
		micro: 2,
		mods: []module{
			{"0.input_layernorm", 1, 1},
			{"0.self_attention.linear_qkv", 1, 2},
			{"0.self_attention.dense", 1, 1},
			{"0.mlp.dense_h_to_4h", 1, 1},
			{"0.mlp.dense_4h_to_h", 1, 1},
		},
		params: []string{"0.input_layernorm.weight", "0.self_attention.linear_qkv.weight", "0.self_attention.dense.weight", "0.mlp.dense_h_to_4h.weight", "0.mlp.dense_4h_to_h.weight"},
		ops:    []string{"min", "max", "norm", "nans"},
		kinds:  []kind{kActv, kActvGrad, kGradUnreduced, kGradReduced, kExpAvg, kExpAvgSq, kParamOrigin, kParamUpdated},
	}
}

func tensorNames(base string, n int) []string {
	if n == 1 {
		return []string{base}
	}
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("%s_%d", base, i))
	}
	return out
}

func (s *spec) stat(w where, seed int) stats {
	if s.fault != nil {
		if st := s.fault(w); st != nil {
			return *st
		}
	}
	return clean(seed + w.step + w.rank)
}

var v2FileOf = map[kind]string{kActv: "module", kActvGrad: "module", kGradUnreduced: "weight_grad", kGradReduced: "weight_grad", kExpAvg: "optimizer", kExpAvgSq: "optimizer", kParamOrigin: "param", kParamUpdated: "param"}
var v2ScopeOf = map[kind]string{kActv: "forward", kActvGrad: "backward", kGradUnreduced: "unreduced", kGradReduced: "reduced", kExpAvg: "exp_avg", kExpAvgSq: "exp_avg_sq", kParamOrigin: "param_origin", kParamUpdated: "param_updated"}

// generate writes the run under dir and returns the rank folders.
func generate(t testing.TB, dir string, s spec) []string {
	t.Helper()
	if s.perFile == 0 {
		s.perFile = 1
	}
	var folders []string
	for rank := 0; rank < s.ranks; rank++ {
		var fd string
		if s.style == StyleV2 {
			fd = filepath.Join(dir, fmt.Sprintf("rank_%d", rank))
		} else {
			fd = filepath.Join(dir, fmt.Sprintf("Dec03_21-34-%02d-rank%d-%08x", 40+rank%10, rank, 0x1a2b3c4d+rank))
		}
		if err := os.MkdirAll(fd, 0o755); err != nil {
			t.Fatal(err)
		}
		folders = append(folders, fd)
		files := map[string]*strings.Builder{}
		order := []string{}
		emit := func(name, header string, lines []string) {
			b := files[name]
			if b == nil {
				b = &strings.Builder{}
				files[name] = b
				order = append(order, name)
				b.WriteString(header + "\n")
			}
			for _, l := range lines {
				b.WriteString(l + "\n")
			}
		}
		for _, step := range s.steps {
			start := step / s.perFile * s.perFile
			rng := fmt.Sprintf("%d-%d", start, start+s.perFile-1)
			for _, k := range s.kinds {
				if s.skipRank != nil && s.skipRank(rank, k) {
					continue
				}
				if (k == kExpAvg || k == kExpAvgSq) && step == s.steps[0] {
					continue // optimizer state is empty before the first step
				}
				header, lines := s.rows(k, rank, step)
				if len(lines) == 0 {
					continue
				}
				var name string
				if s.style == StyleV2 {
					name = fmt.Sprintf("%s_step%s.csv", v2FileOf[k], rng)
				} else {
					name = fmt.Sprintf("%s_%s.csv", k.String(), rng)
				}
				emit(name, header, lines)
			}
		}
		for _, name := range order {
			if err := os.WriteFile(filepath.Join(fd, name), []byte(files[name].String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// Files the reader must ignore.
		os.WriteFile(filepath.Join(fd, "stack_info.csv"), []byte("module_name,stack_info\n"), 0o644)
		os.WriteFile(filepath.Join(fd, "other_0-0.csv"), []byte("vpp_stage,name,step,norm\n0,x,0,inf\n"), 0o644)
	}
	return folders
}

// rows returns the header and the lines of one kind at one step.
func (s *spec) rows(k kind, rank, step int) (string, []string) {
	ops := s.ops
	switch s.style {
	case StyleV2:
		withMicro := k.activation() || (k == kGradUnreduced && s.mbsGrad)
		header := "vpp_stage,step,module_name,scope,min,max,mean,norm,nans"
		if withMicro {
			header = "vpp_stage,step,module_name,scope,micro_step,min,max,mean,norm,nans"
		}
		v2ops := []string{"min", "max", "mean", "norm", "nans"}
		var lines []string
		line := func(micro int, name string, st stats) {
			var cells []string
			for _, op := range v2ops {
				cells = append(cells, st.op(op))
			}
			ms := ""
			if withMicro {
				ms = strconv.Itoa(max(micro, 0)) + ","
			}
			lines = append(lines, fmt.Sprintf("0,%d,%s,%s,%s%s", step, name, v2ScopeOf[k], ms, strings.Join(cells, ",")))
		}
		s.walk(k, rank, step, func(w where, st stats) {
			name := w.name
			if w.tensor != "" {
				role, idx := w.tensor, "0"
				if i := strings.LastIndexByte(role, '_'); i > 0 && role[i+1] >= '0' && role[i+1] <= '9' {
					role, idx = role[:i], role[i+1:]
				}
				if k == kActvGrad {
					role = "grad_" + role
				}
				name += "." + role + "." + idx
			}
			line(w.micro, name, st)
		})
		return header, lines
	case StyleV1Old:
		prefix := ""
		if s.vpp {
			prefix = "vpp_stage,"
		}
		if k.activation() {
			in, out := "input", "output"
			if k == kActvGrad {
				in, out = "input_grad", "output_grad"
			}
			var cols []string
			for _, side := range []string{in, out} {
				for _, op := range ops {
					cols = append(cols, side+"."+op)
				}
			}
			header := prefix + "module_name,step," + strings.Join(cols, ",")
			var lines []string
			var cur []string
			s.walk(k, rank, step, func(w where, st stats) {
				// Old rows hold the first input and the first output of a call.
				if strings.HasSuffix(w.tensor, "_1") {
					return
				}
				for _, op := range ops {
					cur = append(cur, st.op(op))
				}
				if len(cur) == 2*len(ops) {
					vp := ""
					if s.vpp {
						vp = "0,"
					}
					// In actv_grad TrainerMon wrote input_grad first.
					lines = append(lines, fmt.Sprintf("%s%s_%d,%d,%s", vp, w.name, w.micro, step, strings.Join(cur, ",")))
					cur = cur[:0]
				}
			})
			return header, lines
		}
		header := prefix + "param_name,step," + strings.Join(ops, ",")
		var lines []string
		s.walk(k, rank, step, func(w where, st stats) {
			var cells []string
			for _, op := range ops {
				cells = append(cells, st.op(op))
			}
			vp := ""
			if s.vpp {
				vp = "0,"
			}
			lines = append(lines, fmt.Sprintf("%s%s,%d,%s", vp, w.name, step, strings.Join(cells, ",")))
		})
		return header, lines
	}
	withMicro := k.activation() || (k == kGradUnreduced && s.mbsGrad)
	head := "vpp_stage,name,step,"
	if withMicro {
		head += "micro_step,"
	}
	header := head + strings.Join(append(append([]string{}, ops...), "shape", "dtype"), ",")
	var lines []string
	s.walk(k, rank, step, func(w where, st stats) {
		var cells []string
		for _, op := range append(append([]string{}, ops...), "shape", "dtype") {
			cells = append(cells, st.op(op))
		}
		name := w.name
		if w.tensor != "" {
			name += "." + w.tensor
		}
		ms := ""
		if withMicro {
			ms = strconv.Itoa(max(w.micro, 0)) + ","
		}
		lines = append(lines, fmt.Sprintf("0,%s,%d,%s%s", name, step, ms, strings.Join(cells, ",")))
	})
	return header, lines
}

// walk visits the tensors of one kind at one step in the order TrainerMon
// writes them: forward activations module by module (each module's
// micro-steps together, inputs before outputs), backward activations in
// backward order micro-step by micro-step (gradient of the input, then of
// the output), parameters in registration order.
func (s *spec) walk(k kind, rank, step int, fn func(w where, st stats)) {
	seed := 0
	switch k {
	case kActv:
		for mi, m := range s.mods {
			for micro := 0; micro < s.micro; micro++ {
				for _, tn := range tensorNames("input", m.ins) {
					w := where{kind: k, rank: rank, step: step, micro: micro, mod: mi, name: m.name, tensor: tn}
					fn(w, s.stat(w, seed))
					seed++
				}
				for _, tn := range tensorNames("output", m.outs) {
					w := where{kind: k, rank: rank, step: step, micro: micro, mod: mi, name: m.name, tensor: tn, out: true}
					fn(w, s.stat(w, seed))
					seed++
				}
			}
		}
	case kActvGrad:
		for micro := 0; micro < s.micro; micro++ {
			for mi := len(s.mods) - 1; mi >= 0; mi-- {
				m := s.mods[mi]
				for _, tn := range tensorNames("input", m.ins) {
					w := where{kind: k, rank: rank, step: step, micro: micro, mod: mi, name: m.name, tensor: tn, out: true}
					fn(w, s.stat(w, seed))
					seed++
				}
				for _, tn := range tensorNames("output", m.outs) {
					w := where{kind: k, rank: rank, step: step, micro: micro, mod: mi, name: m.name, tensor: tn}
					fn(w, s.stat(w, seed))
					seed++
				}
			}
		}
	case kGradUnreduced:
		micros := []int{-1}
		if s.mbsGrad {
			micros = nil
			for m := 0; m < s.micro; m++ {
				micros = append(micros, m)
			}
		}
		for _, micro := range micros {
			for pi, p := range s.params {
				w := where{kind: k, rank: rank, step: step, micro: micro, mod: pi, name: p}
				fn(w, s.stat(w, seed))
				seed++
			}
		}
	default:
		for pi, p := range s.params {
			w := where{kind: k, rank: rank, step: step, micro: -1, mod: pi, name: p}
			fn(w, s.stat(w, seed))
			seed++
		}
	}
}

func st(s stats) *stats { return &s }

// after reports whether w comes at or after (step, micro, mod) in the
// forward pass of one rank, outputs after inputs.
func (w where) atOrAfter(step, micro, mod int, outOnly bool) bool {
	switch {
	case w.step != step:
		return w.step > step
	case w.micro != micro:
		return w.micro > micro
	case w.mod != mod:
		return w.mod > mod
	}
	return w.out || !outOnly
}

func readRun(t *testing.T, dir string, opt Options) (*Run, Findings) {
	t.Helper()
	r, err := Read(context.Background(), dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r, r.Findings()
}
