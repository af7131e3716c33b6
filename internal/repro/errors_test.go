package repro

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyDump copies the golden dump into a temporary folder and returns its
// root and rank folder.
func copyDump(t *testing.T) (root, rank string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "dump")
	if err := os.CopyFS(root, os.DirFS(goldenDump)); err != nil {
		t.Fatal(err)
	}
	return root, filepath.Join(root, "step3", "rank1")
}

// writeDump writes a one-rank dump with the given dump.json.
func writeDump(t *testing.T, dumpJSON string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "dump")
	rank := filepath.Join(root, "step0", "rank0")
	if err := os.MkdirAll(rank, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rank, "dump.json"), []byte(dumpJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestReproErrors(t *testing.T) {
	tmp := t.TempDir()
	notEmpty := filepath.Join(tmp, "not-empty")
	os.MkdirAll(notEmpty, 0o755)
	os.WriteFile(filepath.Join(notEmpty, "x"), nil, 0o644)
	aFile := filepath.Join(tmp, "a-file")
	os.WriteFile(aFile, nil, 0o644)
	clean := writeDump(t, `{"task": "tensor", "data": {"Torch.log.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1.0, "Min": 0.5, "data_name": "x.pt"}], "output": [{"type": "torch.Tensor", "Max": 0.1, "Min": -0.6, "data_name": "y.pt"}]}}}`)
	garbage := writeDump(t, `{"data": {"Torch.log.0.forward": [1, {"input_args": 5}], "Torch.log.1.forward": {"input_args": 5, "input_kwargs": [], "output": "x"}}}`)
	noForward := writeDump(t, `{"task": "tensor", "data": {"Torch.sqrt.0.backward": {"input": [{"type": "torch.Tensor", "Max": 1.0, "Min": 0.5, "data_name": "x.pt"}], "output": [null]}}}`)
	tests := []struct {
		name string
		opt  Options
		want []string
		is   error
	}{
		{"inside the dump", Options{Path: goldenDump, Op: "Torch.sqrt.0", Step: 3, Rank: 1, Out: filepath.Join(goldenDump, "step3", "case")},
			[]string{"refusing to write", "inside the dump folder"}, nil},
		{"inside the rank folder given as dump.json", Options{Path: filepath.Join(goldenDump, "step3", "rank1", "dump.json"), Op: "Torch.sqrt.0", Step: 3, Rank: 1, Out: filepath.Join(goldenDump, "step3", "rank1", "dump_tensor_data", "c")},
			[]string{"refusing to write"}, nil},
		{"no -o", Options{Path: goldenDump, Op: "Torch.sqrt.0", Step: 3, Rank: 1},
			[]string{"-o DIR"}, nil},
		{"not empty", Options{Path: goldenDump, Op: "Torch.sqrt.0", Step: 3, Rank: 1, Out: notEmpty},
			[]string{"not empty", "--force"}, nil},
		{"a file", Options{Path: goldenDump, Op: "Torch.sqrt.0", Step: 3, Rank: 1, Out: aFile},
			[]string{"is a file"}, nil},
		{"bad device", Options{Path: goldenDump, Op: "Torch.sqrt.0", Step: 3, Rank: 1, Out: filepath.Join(tmp, "d"), Device: "tpu"},
			[]string{`device "tpu"`}, nil},
		{"statistics only", Options{Path: "testdata/statistics-only", Step: Auto, Rank: Auto, Out: filepath.Join(tmp, "s")},
			[]string{"testdata/statistics-only/step0/rank0/dump.json", "Torch.log.0.forward", `task "statistics"`, "statistics only",
				`msprobe task "tensor" with "list": ["Torch.log"], "step": [0], "rank": [0]`, "nanhunt plan"}, ErrStatisticsOnly},
		{"entry not found", Options{Path: goldenDump, Op: "Torch.sqrt.7.backward", Step: 3, Rank: 1, Out: filepath.Join(tmp, "n")},
			[]string{"entry Torch.sqrt.7.backward not found in testdata/golden-dump/step3/rank1/dump.json", "Torch.sqrt.0.forward, Torch.sqrt.0.backward"}, nil},
		{"no counter", Options{Path: goldenDump, Op: "Torch.sqrt", Step: 3, Rank: 1, Out: filepath.Join(tmp, "n")},
			[]string{`op "Torch.sqrt"`, "calls of Torch.sqrt in step 3, rank 1: Torch.sqrt.0.forward, Torch.sqrt.0.backward"}, nil},
		{"no such step", Options{Path: goldenDump, Op: "Torch.sqrt.0", Step: 9, Rank: 1, Out: filepath.Join(tmp, "n")},
			[]string{"no rank folder for step 9, rank 1 (steps 3 here)"}, nil},
		{"module", Options{Path: goldenDump, Op: "Module.encoder.Linear.forward.0", Step: 3, Rank: 1, Out: filepath.Join(tmp, "n")},
			[]string{"module call"}, nil},
		{"no anomaly", Options{Path: clean, Step: Auto, Rank: Auto, Out: filepath.Join(tmp, "n")},
			[]string{"no NaN/Inf found", "--op"}, nil},
		{"garbage entry", Options{Path: garbage, Op: "Torch.log.0", Step: 0, Rank: 0, Out: filepath.Join(tmp, "n")},
			[]string{`entry "Torch.log.0.forward"`, "offset 33", "want an object"}, nil},
		{"garbage fields", Options{Path: garbage, Op: "Torch.log.1", Step: 0, Rank: 0, Out: filepath.Join(tmp, "n")},
			[]string{"statistics only"}, ErrStatisticsOnly},
		{"backward without forward", Options{Path: noForward, Op: "Torch.sqrt.0.backward", Step: 0, Rank: 0, Out: filepath.Join(tmp, "n")},
			[]string{"Torch.sqrt.0.forward is not in the dump", `"data_mode": ["all"]`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Write(tt.opt)
			if err == nil {
				t.Fatalf("no error; case %+v", c)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if tt.opt.Out != "" && tt.opt.Out != notEmpty && tt.opt.Out != aFile {
				if _, err := os.Stat(tt.opt.Out); err == nil {
					t.Errorf("%s was created", tt.opt.Out)
				}
			}
		})
	}
	if ents, _ := os.ReadDir(filepath.Join(goldenDump, "step3")); len(ents) != 1 {
		t.Errorf("the golden dump was written to: %v", ents)
	}
}

func TestReproMissingTensorFile(t *testing.T) {
	root, rank := copyDump(t)
	missing := filepath.Join(rank, "dump_tensor_data", "Torch.sqrt.0.backward.input.0.pt")
	if err := os.Remove(missing); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "case")
	_, err := Write(Options{Path: root, Op: "Torch.sqrt.0.backward", Step: 3, Rank: 1, Out: out})
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{"tensor file Torch.sqrt.0.backward.input.0.pt (input.0 of Torch.sqrt.0.backward) not found", missing,
		"the header's dump_data_dir /home/user/job/dumps/step3/rank1/dump_tensor_data lies outside the dump folder " + root + " and is not followed"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v is not os.ErrNotExist", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was created", out)
	}
}

// TestReproDumpDataDir: when dump_tensor_data/ is not next to dump.json, the
// files are looked for in the folder the header's dump_data_dir names, when
// it lies inside the dump folder; outside it, never.
func TestReproDumpDataDir(t *testing.T) {
	tests := []struct {
		name   string
		inside bool
	}{
		{"inside the dump", true},
		{"outside the dump", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, rank := copyDump(t)
			moved := filepath.Join(t.TempDir(), "elsewhere")
			if tt.inside {
				moved = filepath.Join(root, "tensors", "rank1")
				os.MkdirAll(filepath.Dir(moved), 0o755)
			}
			if err := os.Rename(filepath.Join(rank, "dump_tensor_data"), moved); err != nil {
				t.Fatal(err)
			}
			setDumpDataDir(t, rank, moved)
			out := filepath.Join(t.TempDir(), "case")
			c, err := Write(Options{Path: root, Op: "Torch.sqrt.0.backward", Step: 3, Rank: 1, Out: out})
			if !tt.inside {
				if err == nil || !strings.Contains(err.Error(), "dump_data_dir "+moved+" lies outside the dump folder") || !errors.Is(err, os.ErrNotExist) {
					t.Errorf("error %v", err)
				}
				if _, err := os.Stat(out); err == nil {
					t.Errorf("%s was created", out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Files) != 2 {
				t.Errorf("files %v", c.Files)
			}
		})
	}
}

// setDumpDataDir rewrites the dump_data_dir of the golden dump's header.
func setDumpDataDir(t *testing.T, rank, dir string) {
	t.Helper()
	path := filepath.Join(rank, "dump.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(dir)
	b = []byte(strings.Replace(string(b), `"/home/user/job/dumps/step3/rank1/dump_tensor_data"`, string(q), 1))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReproDamagedDump(t *testing.T) {
	root, rank := copyDump(t)
	path := filepath.Join(rank, "dump.json")
	b, _ := os.ReadFile(path)
	cut := strings.Index(string(b), `"Torch.sqrt.0.backward"`) - 40
	os.WriteFile(path, b[:cut], 0o644)
	_, err := Write(Options{Path: root, Op: "Torch.sqrt.0.backward", Step: 3, Rank: 1, Out: filepath.Join(t.TempDir(), "case")})
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{path, "offset ", "file ends early", "the entry may lie after the damage"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	// Damage after the entries used does not matter: reading stops there.
	os.WriteFile(path, b[:strings.Index(string(b), `"Tensor.mul_.0.backward"`)+10], 0o644)
	if _, err := Write(Options{Path: root, Op: "Torch.sqrt.0.backward", Step: 3, Rank: 1, Out: filepath.Join(t.TempDir(), "case2")}); err != nil {
		t.Fatal(err)
	}
}

func TestReproDataNameIsNotAPath(t *testing.T) {
	root := writeDump(t, `{"task": "tensor", "data": {"Torch.log.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1.0, "Min": 0.5, "data_name": ".."}], "output": []}}}`)
	_, err := Write(Options{Path: root, Op: "Torch.log.0.forward", Step: 0, Rank: 0, Out: filepath.Join(t.TempDir(), "case")})
	if err == nil || !strings.Contains(err.Error(), `data_name ".." is not a file name`) {
		t.Errorf("error %v", err)
	}
	// a path in data_name: only its base name is looked for, next to dump.json
	root = writeDump(t, `{"task": "tensor", "data": {"Torch.log.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1.0, "Min": 0.5, "data_name": "../../../etc/passwd"}], "output": []}}}`)
	_, err = Write(Options{Path: root, Op: "Torch.log.0.forward", Step: 0, Rank: 0, Out: filepath.Join(t.TempDir(), "case")})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "step0", "rank0", "dump_tensor_data", "passwd")) {
		t.Errorf("error %v", err)
	}
}

func TestReproForce(t *testing.T) {
	out := filepath.Join(t.TempDir(), "case")
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(out, "old"), nil, 0o644)
	if _, err := Write(Options{Path: goldenDump, Op: "Torch.sqrt.0", Step: 3, Rank: 1, Out: out, Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, ReproPy)); err != nil {
		t.Error(err)
	}
}
