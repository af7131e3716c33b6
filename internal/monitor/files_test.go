package monitor

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name, module, tensor string
		k                    kind
		style                string
		sd                   side
	}{
		{"0.mlp.dense.input", "0.mlp.dense", "input", kActv, StyleV1, sideIn},
		{"0.mlp.dense.output_1", "0.mlp.dense", "output_1", kActv, StyleV1, sideOut},
		{"0.mlp.dense.input_0", "0.mlp.dense", "input_0", kActvGrad, StyleV1, sideOut},
		{"0.mlp.dense.output", "0.mlp.dense", "output", kActvGrad, StyleV1, sideIn},
		{"0.mlp.dense.outputs", "0.mlp.dense.outputs", "", kActv, StyleV1, sideNone},
		{"0.mlp.dense.output_x", "0.mlp.dense.output_x", "", kActv, StyleV1, sideNone},
		{"layers.1.attn.grad_input.0", "layers.1.attn", "grad_input.0", kActvGrad, StyleV2, sideOut},
		{"layers.1.attn.output.2", "layers.1.attn", "output.2", kActv, StyleV2, sideOut},
		{"layers.1.attn.weight", "layers.1.attn.weight", "", kActv, StyleV2, sideNone},
	} {
		m, tn, sd := splitTensor([]byte(tc.name), tc.k, tc.style)
		if string(m) != tc.module || string(tn) != tc.tensor || sd != tc.sd {
			t.Errorf("%s: %q %q %v", tc.name, m, tn, sd)
		}
	}
	for _, tc := range []struct {
		in, module string
		micro      int
	}{{"fc2_0", "fc2", 0}, {"1.self_attention.core_attention_flash_12", "1.self_attention.core_attention_flash", 12}, {"fc2", "fc2", -1}, {"_3", "_3", -1}, {"expert_3_1", "expert_3", 1}} {
		m, ms := splitMicro([]byte(tc.in))
		if string(m) != tc.module || ms != tc.micro {
			t.Errorf("%s: %q %d", tc.in, m, ms)
		}
	}
}

func TestRestartFolders(t *testing.T) {
	dir := t.TempDir()
	s := defaultSpec()
	s.ranks = 2
	s.kinds = []kind{kActv}
	s.steps = []int{0, 1}
	generate(t, dir, s)
	// A later folder of rank 1 (after a restart) holds steps 2-3 with the NaN.
	s2 := s
	s2.steps = []int{2, 3}
	s2.fault = func(w where) *stats {
		if w.rank == 1 && w.step == 3 && w.mod == 2 && w.out {
			return st(nanStats)
		}
		return nil
	}
	tmp := t.TempDir()
	folders := generate(t, tmp, s2)
	if err := os.Rename(folders[1], filepath.Join(dir, "Dec04_09-00-00-rank1-feedbeef")); err != nil {
		t.Fatal(err)
	}
	r, f := readRun(t, dir, Options{})
	if len(r.Folders) != 3 || r.Folders[1].Rank != 1 || r.Folders[2].Stamp != "Dec04_09-00-00" {
		t.Fatalf("folders %+v", r.Folders)
	}
	if f.WarningCount != 1 || !strings.Contains(f.Warnings[0].Message, "rank 1 has 2 folders") {
		t.Errorf("warnings %v", f.Warnings)
	}
	if f.Forward == nil || f.Forward.Step != 3 || f.Forward.OriginRank != 1 || !strings.HasPrefix(f.Forward.First.File, "Dec04_09-00-00-rank1-feedbeef/") {
		t.Fatalf("forward %+v", f.Forward)
	}
	if !slices.Equal(f.Forward.RanksNotRecorded, []int{0}) {
		t.Errorf("not recorded %v", f.Forward.RanksNotRecorded)
	}
}

func TestReadErrorsAndRankFolder(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := Read(context.Background(), missing, Options{}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing folder: %v", err)
	}
	empty := t.TempDir()
	os.Mkdir(filepath.Join(empty, "something"), 0o755)
	if _, err := Read(context.Background(), empty, Options{}); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("empty folder: %v", err)
	}
	// Rank folders whose files are all unreadable.
	bad := t.TempDir()
	fd := filepath.Join(bad, "Dec03_21-34-40-rank0-1a2b3c4d")
	os.Mkdir(fd, 0o755)
	os.WriteFile(filepath.Join(fd, "actv_0-0.csv"), []byte("garbage without columns\n1,2\n"), 0o644)
	if _, err := Read(context.Background(), bad, Options{}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("unreadable: %v", err)
	}

	dir := t.TempDir()
	s := defaultSpec()
	s.fault = forwardBorn(3, 1, 0, 0)
	folders := generate(t, dir, s)
	_, f := readRun(t, folders[3], Options{})
	if !slices.Equal(f.Ranks, []int{3}) || f.Forward == nil || f.Forward.OriginRank != 3 || f.Forward.First.File != "actv_1-1.csv" {
		t.Fatalf("rank folder: %+v", f.Forward)
	}
	// A folder without a rank in its name holding monitor files.
	plain := filepath.Join(t.TempDir(), "copied")
	if err := os.Rename(folders[2], plain); err != nil {
		t.Fatal(err)
	}
	_, f = readRun(t, plain, Options{})
	if f.WarningCount != 1 || f.Ranks[0] != 0 {
		t.Errorf("plain folder: %v", f.Warnings)
	}
}

func TestTruncatedAndGarbage(t *testing.T) {
	dir := t.TempDir()
	s := defaultSpec()
	s.kinds = []kind{kActv, kGradReduced}
	s.fault = forwardBorn(1, 2, 0, 2)
	folders := generate(t, dir, s)
	// Rank 0: garbage lines in the middle and a cut last line.
	p := filepath.Join(folders[0], "actv_1-1.csv")
	b, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var out []string
	out = append(out, lines[:3]...)
	// The unterminated quote runs on into the next lines, as in any CSV
	// reader, until a quote ends the field in a way that breaks the record.
	out = append(out, "this is not csv at all", "0,0.mlp.x.output,notastep,0,1,2,3,0.0,\"[1]\",torch.float32", "0,0.mlp.x.output,1,0,1,zz,3,0.0,\"[1]\",torch.float32", `0,"unterminated,1,2`, "")
	out = append(out, lines[3:]...)
	last := lines[len(lines)-1]
	out[len(out)-1] = last[:len(last)-25]
	os.WriteFile(p, []byte(strings.Join(out, "\n")), 0o644)
	// Rank 2: an unknown column and an empty file.
	p2 := filepath.Join(folders[2], "actv_0-0.csv")
	b2, _ := os.ReadFile(p2)
	b2 = []byte(strings.Replace(string(b2), "shape,dtype\n", "shape,dtype_x\n", 1))
	os.WriteFile(p2, b2, 0o644)
	os.WriteFile(filepath.Join(folders[2], "grad_reduced_3-3.csv"), nil, 0o644)

	r, f := readRun(t, dir, Options{})
	want := []struct {
		file string
		line int
		msg  string
	}{
		{"actv_0-0.csv", 1, "unknown columns ignored: dtype_x"},
		{"grad_reduced_3-3.csv", 0, "empty file"},
		{"actv_1-1.csv", 4, "malformed line skipped: 1 fields"},
		{"actv_1-1.csv", 5, `malformed line skipped: step "notastep"`},
		{"actv_1-1.csv", 6, `malformed line skipped: max "zz" is not a number`},
		{"actv_1-1.csv", 7, "malformed line skipped: extraneous or missing"},
	}
	for _, w := range want {
		found := false
		for _, got := range r.Warnings {
			if strings.HasSuffix(got.File, w.file) && got.Line == w.line && strings.Contains(got.Message, w.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("missing warning %+v in %v", w, r.Warnings)
		}
	}
	trunc := false
	for _, got := range r.Warnings {
		if strings.Contains(got.Message, "truncated last line skipped") {
			trunc = true
		}
	}
	if !trunc {
		t.Errorf("no truncation warning: %v", r.Warnings)
	}
	if f.Forward == nil || f.Forward.Step != 2 || f.Forward.OriginRank != 1 {
		t.Fatalf("forward %+v", f.Forward)
	}
}

func TestTPGroups(t *testing.T) {
	if got := TPGroups(6, 2); !reflect.DeepEqual(got, [][]int{{0, 1}, {2, 3}, {4, 5}}) {
		t.Errorf("TPGroups(6, 2) = %v", got)
	}
	if got := TPGroups(5, 4); !reflect.DeepEqual(got, [][]int{{0, 1, 2, 3}, {4}}) {
		t.Errorf("TPGroups(5, 4) = %v", got)
	}
	if TPGroups(4, 0) != nil {
		t.Errorf("TPGroups(4, 0) not nil")
	}
}

func TestFileNames(t *testing.T) {
	for name, want := range map[string]string{
		"actv_0-0.csv":            KindActv,
		"actv_grad_3-5.csv":       KindActvGrad,
		"efxp_avg_sq_1-1.csv":     KindExpAvgSq,
		"exp_avg_sq_1-1.csv":      KindExpAvgSq,
		"exp_avg_10-19.csv":       KindExpAvg,
		"grad_unreduced_0-0.csv":  KindGradUnreduced,
		"weight_grad_step0-0.csv": "weight_grad",
		"other_0-0.csv":           "",
		"linear_hook_0-0.csv":     "",
		"stack_info.csv":          "",
		"cc_step0-0.csv":          "",
	} {
		f, ok := monitorFile(name)
		if ok != (want != "") || f.Kind != want {
			t.Errorf("%s: %+v %v", name, f, ok)
		}
	}
	for name, want := range map[string]Folder{
		"Dec03_21-34-40-rank12-1a2b3c4d": {Rank: 12, Generation: "v1", Stamp: "Dec03_21-34-40"},
		"rank_7":                         {Rank: 7, Generation: "v2"},
	} {
		if f, ok := folderOf(name); !ok || !reflect.DeepEqual(f, want) {
			t.Errorf("%s: %+v", name, f)
		}
	}
	for _, name := range []string{"anomaly_detected", "rank0", "module_struct"} {
		if _, ok := folderOf(name); ok {
			t.Errorf("%s taken as a rank folder", name)
		}
	}
	if !(stampKey("Jan02_00-00-00") < stampKey("Dec03_21-34-40") && stampKey("Dec03_21-34-40") < stampKey("Dec03_21-34-41")) {
		t.Errorf("stamp order")
	}
}

func TestRangeSet(t *testing.T) {
	var r rangeSet
	for _, s := range []int{5, 1, 2, 9, 3, 7, 8, 6, 0, 20, 4} {
		r.add(s)
	}
	if r.String() != "0-9,20" {
		t.Errorf("got %s", r.String())
	}
	for s, want := range map[int]bool{-1: false, 0: true, 9: true, 10: false, 20: true, 21: false} {
		if r.contains(s) != want {
			t.Errorf("contains(%d)", s)
		}
	}
	var o rangeSet
	o.add(11)
	o.add(10)
	o.add(30)
	r.union(&o)
	if r.String() != "0-11,20,30" {
		t.Errorf("union %s", r.String())
	}
}
