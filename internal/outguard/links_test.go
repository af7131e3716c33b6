package outguard

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// A dump spread over several disks: nothing is written into a folder its
// links lead to, nor over a file one of its files links to, however the
// dump and the output are named; what lies beside those folders may be
// written.
func TestGuardLinks(t *testing.T) {
	root := tree(t,
		"dump/step0/rank0/dump.json", "dump/step0/rank0/construct.json",
		"disk2/step1/rank0/dump.json", "nvme/rank1/dump.json",
		"ext/stack.json", "ext/actv.csv", "ext/other.json",
		"monitor/Dec03-rank0-1a2b3c4d/", "out/",
	)
	p := func(s string) string { return filepath.Join(root, filepath.FromSlash(s)) }
	symlink(t, p("disk2/step1"), p("dump/step1"))
	symlink(t, "../../nvme/rank1", p("disk2/step1/rank1")) // relative, inside a linked folder
	symlink(t, p("ext/stack.json"), p("dump/step0/rank0/stack.json"))
	symlink(t, p("ext/actv.csv"), p("monitor/Dec03-rank0-1a2b3c4d/actv_0-9.csv"))
	symlink(t, p("disk2/step1"), p("into-step1"))
	symlink(t, p("nowhere"), p("dump/step7"))        // dangling
	symlink(t, "step8", p("dump/step8"))             // a loop
	symlink(t, p("ext/other.json"), p("dump/step9")) // a file
	guard := func(dump string) *Guard {
		g := &Guard{}
		g.Dump(p(dump))
		g.InputTree(p("monitor"))
		return g
	}
	tests := []struct {
		name  string
		dump  string
		out   string
		is    error  // nil: written
		names string // the message names it
	}{
		{"a dump.json through a linked step folder", "dump", "dump/step1/rank0/dump.json", ErrInsideDump, "dump/step1 is a link to " + p("disk2/step1")},
		{"a new file in a linked step folder", "dump", "dump/step1/v.json", ErrInsideDump, "is a link to"},
		{"a new file in a linked rank folder", "dump", "dump/step1/rank1/v.json", ErrInsideDump, "rank1 is a link to " + p("nvme/rank1")},
		{"the folder a step link leads to", "dump", "disk2/step1/v.json", ErrInsideDump, "inside the dump"},
		{"the folder a rank link leads to", "dump", "nvme/rank1/v.json", ErrInsideDump, "inside the dump"},
		{"a folder that is a link into a linked step", "dump", "into-step1/v.json", ErrInsideDump, "inside the dump"},
		{"the file a stack.json links to", "dump", "ext/stack.json", ErrSameFile, "stack.json"},
		{"the file a stack.json of another step links to", "dump/step1", "ext/stack.json", ErrSameFile, "stack.json"},
		{"the file a monitor file links to", "dump", "ext/actv.csv", ErrSameFile, "actv_0-9.csv"},
		{"the dump_path above a linked step folder given", "dump/step1", "dump/v.json", ErrInsideDump, "inside the dump " + p("dump")},
		{"the dump_path above a rank folder given through a link", "dump/step1/rank1/dump.json", "dump/step0/v.json", ErrInsideDump, "inside the dump"},
		{"beside the folder a step link leads to", "dump", "disk2/v.json", nil, ""},
		{"beside the file a stack.json links to", "dump", "ext/other.json", nil, ""},
		{"outside, with links that lead nowhere in the dump", "dump", "out/v.json", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := guard(tt.dump).Check(Output{Flag: "-o", Path: p(tt.out)})
			switch {
			case tt.is == nil:
				if err != nil {
					t.Errorf("refused: %v", err)
				}
			case !errors.Is(err, tt.is):
				t.Errorf("error %v, want %q", err, tt.is)
			case !strings.Contains(err.Error(), tt.names):
				t.Errorf("error %q does not name %q", err, tt.names)
			}
		})
	}
	for _, tt := range []struct {
		path, dump string
		want       bool
	}{
		{"disk2/step1/x", "dump", true},
		{"nvme/rank1/x", "dump/step1", true},
		{"nvme/rank1/x", "dump/step0", false},
		{"disk2/x", "dump", false},
	} {
		if got := Inside(p(tt.path), p(tt.dump)); got != tt.want {
			t.Errorf("Inside(%s, %s) = %v, want %v", tt.path, tt.dump, got, tt.want)
		}
	}
}

// DumpRoot climbs from where the links lead; namedRoot from the path as
// named. A folder holding step folders that are links is a dump_path.
func TestDumpRootLinks(t *testing.T) {
	root := tree(t, "dump/step0/rank0/dump.json", "disk2/step1/rank0/dump.json", "named/step5/", "run/step3/rank0/dump.json")
	p := func(s string) string { return filepath.Join(root, filepath.FromSlash(s)) }
	symlink(t, p("disk2/step1"), p("dump/step1"))
	symlink(t, p("run/step3"), p("named/step5/step0"))
	tests := []struct {
		name, path, root, named string
	}{
		{"a rank folder through a linked step folder", "dump/step1/rank0", "disk2", "dump"},
		{"a dump.json through a linked step folder", "dump/step1/rank0/dump.json", "disk2", "dump"},
		{"a linked step folder", "dump/step1", "disk2", "dump"},
		{"a dump_path named like a step, its steps links", "named/step5", "named/step5", "named/step5"},
		{"a real rank folder", "dump/step0/rank0", "dump", "dump"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DumpRoot(p(tt.path))
			want, _ := resolve(p(tt.root))
			if err != nil || got != want {
				t.Errorf("DumpRoot(%s) = %s, %v; want %s", tt.path, got, err, want)
			}
			got, err = namedRoot(p(tt.path))
			if err != nil || got != p(tt.named) {
				t.Errorf("namedRoot(%s) = %s, %v; want %s", tt.path, got, err, p(tt.named))
			}
		})
	}
}
