package outguard

import (
	"path/filepath"
	"testing"
)

func TestDumpRoot(t *testing.T) {
	root := tree(t,
		"run/step3/rank0/dump.json", "run/step3/rank1/stack.json", "run/step4/rank/dump.json",
		"run/step3/proc1234/dump.json",
		"ms/graph/step0/rank0/dump.json",
		"named/step5/step0/rank0/dump.json",
		"flat/dump.json",
		"stepless/step2/custom/dump.json",
		"rank7/step0/rank0/dump.json",
		"graph/step0/rank0/dump.json",
		"notes.txt",
	)
	p := func(s string) string { return filepath.Join(root, filepath.FromSlash(s)) }
	tests := []struct {
		name, path, want string
	}{
		{"a dump_path", "run", "run"},
		{"a step folder", "run/step3", "run"},
		{"a rank folder", "run/step3/rank0", "run"},
		{"a rank folder without dump.json", "run/step3/rank1", "run"},
		{"a dump.json", "run/step3/rank0/dump.json", "run"},
		{"a bare rank folder of msprobe 8", "run/step4/rank", "run"},
		{"a process folder of msprobe 26", "run/step3/proc1234", "run"},
		{"a rank folder under a MindSpore level", "ms/graph/step0/rank0", "ms"},
		{"a step folder under a MindSpore level", "ms/graph/step0", "ms"},
		{"a MindSpore level given itself", "ms/graph", "ms/graph"},
		{"a dump_path named like a step", "named/step5", "named/step5"},
		{"a dump_path named like a rank", "rank7", "rank7"},
		{"a dump_path named like a mode", "graph", "graph"},
		// from below, a folder named graph or pynative is taken for a MindSpore
		// level: the root lies above it, and more is refused, not less
		{"a rank folder of a dump_path named like a mode", "graph/step0/rank0", "."},
		{"a dump.json alone", "flat/dump.json", "flat"},
		{"a folder holding dump.json in a step folder", "stepless/step2/custom", "stepless"},
		{"a file that is not a dump", "notes.txt", "notes.txt"},
		{"a path that does not exist", "none/step1", "none/step1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DumpRoot(p(tt.path))
			want, _ := resolve(p(tt.want))
			if err != nil || got != want {
				t.Errorf("DumpRoot(%s) = %s, %v; want %s", tt.path, got, err, want)
			}
		})
	}
}

func TestDumpRootFailsClosed(t *testing.T) {
	root := tree(t, "loop/")
	symlink(t, "b", filepath.Join(root, "loop", "a"))
	symlink(t, "a", filepath.Join(root, "loop", "b"))
	if got, err := DumpRoot(filepath.Join(root, "loop", "a", "step0")); err == nil {
		t.Errorf("a dump path through a link loop has the root %s", got)
	}
}
