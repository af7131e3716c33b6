package outguard

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestGuardCheck(t *testing.T) {
	root := tree(t,
		"dump/step5/rank0/dump.json", "dump/step5/rank0/stack.json", "dump/step5/rank0/construct.json",
		"dump/step5/rank1/dump.json", "dump/step5/rank1/dump_tensor_data/x.pt",
		"logs/train.log", "logs/rank1.log", "rules.json", "saved.json",
		"monitor/Dec03-rank0-1a2b3c4d/actv_0-9.csv",
		"out/", "loop/",
	)
	p := func(s string) string { return filepath.Join(root, filepath.FromSlash(s)) }
	// outputs that already exist as other names of inputs
	link(t, p("logs/train.log"), p("out/log-link.json"))
	link(t, p("dump/step5/rank1/dump.json"), p("out/dump-link.json"))
	link(t, p("dump/step5/rank0/construct.json"), p("out/construct-link.json"))
	link(t, p("monitor/Dec03-rank0-1a2b3c4d/actv_0-9.csv"), p("out/csv-link.json"))
	link(t, p("dump/step5/rank1/dump_tensor_data/x.pt"), p("out/tensor-link.json"))
	symlink(t, p("rules.json"), p("out/rules-symlink.json"))
	symlink(t, p("monitor/Dec03-rank0-1a2b3c4d/actv_0-9.csv"), p("out/csv-symlink.json"))
	link(t, p("saved.json"), p("out/saved-link.json"))
	link(t, p("out/tensor-link.json"), p("out/tensor-link2.json"))
	symlink(t, "b", p("loop/a"))
	symlink(t, "a", p("loop/b"))

	full := func(dump string) *Guard {
		g := &Guard{}
		g.Dump(dump)
		g.Input(p("logs/train.log"), p("logs/rank1.log"), p("rules.json"), "")
		g.InputTree(p("monitor"))
		return g
	}
	o := func(path string) Output { return Output{Flag: "-o", Path: path} }
	tests := []struct {
		name  string
		guard *Guard
		outs  []Output
		is    error  // nil: no refusal
		names string // the input or flags the message names
	}{
		{"new files outside everything", full(p("dump")), []Output{o(p("out/v.json")), {"--html", p("out/v.html")}}, nil, ""},
		{"standard output is not checked", full(p("dump")), []Output{o("-"), {"--html", ""}}, nil, ""},
		{"the log itself", full(p("dump")), []Output{o(p("logs/train.log"))}, ErrSameFile, "the input " + p("logs/train.log")},
		{"a hard link to the log", full(p("dump")), []Output{o(p("out/log-link.json"))}, ErrSameFile, "the input " + p("logs/train.log")},
		{"a hard link to a dump.json of the dump", full(p("dump")), []Output{o(p("out/dump-link.json"))}, ErrSameFile, "the input " + p("dump/step5/rank1/dump.json")},
		{"a hard link to a dump.json, the dump given as a rank folder", full(p("dump/step5/rank1")), []Output{o(p("out/dump-link.json"))}, ErrSameFile, "dump.json"},
		{"a hard link to a construct.json, the dump given as a dump.json", full(p("dump/step5/rank0/dump.json")), []Output{o(p("out/construct-link.json"))}, ErrSameFile, "construct.json"},
		{"a hard link to a monitor file", full(p("dump")), []Output{o(p("out/csv-link.json"))}, ErrSameFile, "actv_0-9.csv"},
		{"a symbolic link to a monitor file", full(p("dump")), []Output{o(p("out/csv-symlink.json"))}, ErrSameFile, "actv_0-9.csv"},
		{"a symbolic link to the rules", full(p("dump")), []Output{o(p("out/rules-symlink.json"))}, ErrSameFile, "rules.json"},
		{"the saved verdict", func() *Guard { g := full(""); g.Input(p("saved.json")); return g }(), []Output{{"--html", p("out/saved-link.json")}}, ErrSameFile, "saved.json"},
		{"tensor data is not read by the guard", full(p("dump")), []Output{o(p("out/tensor-link.json"))}, nil, ""},
		{"two outputs with one name", full(p("dump")), []Output{o(p("out/v.json")), {"--html", p("out/v.json")}}, ErrSameOutput, "-o and --html"},
		{"two outputs with one name spelt twice", full(p("dump")), []Output{{"--html", p("out/v.json")}, {"--markdown", p("out/../out/v.json")}}, ErrSameOutput, "--html and --markdown"},
		{"two outputs that are one file", full(p("dump")), []Output{{"--html", p("out/tensor-link.json")}, {"--markdown", p("out/tensor-link2.json")}}, ErrSameOutput, "--html and --markdown"},
		{"inside the dump", full(p("dump")), []Output{o(p("dump/v.json"))}, ErrInsideDump, p("dump")},
		{"inside the dump of a rank folder", full(p("dump/step5/rank0")), []Output{o(p("dump/step5/rank1/v.json"))}, ErrInsideDump, p("dump")},
		{"inside the dump of a step folder", full(p("dump/step5")), []Output{o(p("dump/v.json"))}, ErrInsideDump, p("dump")},
		{"inside the dump of a dump.json", full(p("dump/step5/rank0/dump.json")), []Output{o(p("dump/step5/v.json"))}, ErrInsideDump, p("dump")},
		{"a folder output that is the dump", full(p("dump")), []Output{o(p("dump"))}, ErrInsideDump, p("dump")},
		{"an output through a link loop", full(p("dump")), []Output{o(p("loop/a/v.json"))}, nil, "too many"},
		{"a dump through a link loop", full(p("loop/a")), []Output{o(p("out/v.json"))}, ErrUndecided, "loop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.guard.Check(tt.outs...)
			switch {
			case tt.is == nil && tt.names == "":
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			case err == nil:
				t.Fatalf("not refused")
			case tt.is != nil && !errors.Is(err, tt.is):
				t.Errorf("error %q is not %q", err, tt.is)
			}
			if !strings.HasPrefix(err.Error(), "refusing to write ") || !strings.Contains(err.Error(), tt.names) {
				t.Errorf("error %q does not name %q", err, tt.names)
			}
		})
	}
}

// The message reads as a sentence naming the output and the input.
func TestGuardMessage(t *testing.T) {
	root := tree(t, "train.log")
	t.Chdir(root)
	var g Guard
	g.Input("train.log")
	link(t, "train.log", "verdict.json")
	err := g.Check(Output{Flag: "-o", Path: "verdict.json"})
	if want := "refusing to write verdict.json: it is the same file as the input train.log"; err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
