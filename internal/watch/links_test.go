package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Pruning follows no symbolic link: a step folder, a rank folder or a
// tensor folder that is one keeps the tensors it leads to, and the log
// names it; the real folders beside them are pruned.
func TestPruneFollowsNoLinks(t *testing.T) {
	root := t.TempDir()
	dump, disk := filepath.Join(root, "dump"), filepath.Join(root, "disk2")
	tensors := func(dir string) {
		t.Helper()
		d := filepath.Join(dir, tensorFolder)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"a.pt", "b.pt"} {
			if err := os.WriteFile(filepath.Join(d, f), []byte("tensor"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := func(target, path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
	p := func(s string) string { return filepath.Join(root, filepath.FromSlash(s)) }
	// step0: a link to a step folder elsewhere
	tensors(p("disk2/step0/rank0"))
	link(filepath.Join(disk, "step0"), p("dump/step0"))
	// step1: a real rank folder, and one that is a link
	tensors(p("dump/step1/rank0"))
	tensors(p("disk2/step1-rank1"))
	link(filepath.Join(disk, "step1-rank1"), p("dump/step1/rank1"))
	// step2: a rank folder whose tensor folder is a link, and one whose
	// tensor files are links
	tensors(p("disk2/step2-tensors"))
	link(filepath.Join(disk, "step2-tensors", tensorFolder), p("dump/step2/rank0/"+tensorFolder))
	link(p("disk2/step2-tensors/"+tensorFolder+"/a.pt"), p("dump/step2/rank1/"+tensorFolder+"/a.pt"))
	// step3: the last clean step, kept
	tensors(p("dump/step3/rank0"))

	var log strings.Builder
	pr := &Prune{Keep: 1, Log: &log}
	for s := range 4 {
		pr.stepClean(filepath.Join(dump, "step"+string(rune('0'+s))), []int{0, 1}) // both read whole
	}
	count := func(dir string) int {
		ents, _ := os.ReadDir(p(dir))
		return len(ents)
	}
	tests := []struct {
		dir  string
		want int
	}{
		{"disk2/step0/rank0/" + tensorFolder, 2},
		{"disk2/step1-rank1/" + tensorFolder, 2},
		{"disk2/step2-tensors/" + tensorFolder, 2},
		{"dump/step2/rank1/" + tensorFolder, 1}, // the link itself stays: not a tensor file
		{"dump/step1/rank0/" + tensorFolder, 0},
		{"dump/step3/rank0/" + tensorFolder, 2},
	}
	for _, tt := range tests {
		if got := count(tt.dir); got != tt.want {
			t.Errorf("%s holds %d files, want %d\n%s", tt.dir, got, tt.want, log.String())
		}
	}
	for _, want := range []string{
		filepath.Join(dump, "step0") + ": a symbolic link, not followed",
		filepath.Join(dump, "step1", "rank1") + ": a symbolic link, not followed",
		filepath.Join(dump, "step2", "rank0", tensorFolder) + ": a symbolic link, not followed",
		"deleted " + filepath.Join(dump, "step1", "rank0", tensorFolder) + ": 2 files",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, log.String())
		}
	}
}

// The watch sees step and rank folders that are links to folders, as
// trace reads them; links that lead nowhere or to a file are not steps or
// ranks.
func TestLookFollowsLinks(t *testing.T) {
	root := t.TempDir()
	p := func(s string) string { return filepath.Join(root, filepath.FromSlash(s)) }
	for _, d := range []string{"dump/step1/rank0", "dump/step1/rank1", "disk2/step2/rank0", "nvme/rank1", "dump/step4/rank0"} {
		if err := os.MkdirAll(p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p("file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ target, path string }{
		{p("disk2/step2"), p("dump/step2")},
		{"../../nvme/rank1", p("disk2/step2/rank1")},
		{p("nowhere"), p("dump/step3")},
		{p("file"), p("dump/step4/rank1")},
	} {
		if err := os.Symlink(l.target, l.path); err != nil {
			t.Fatal(err)
		}
	}
	l, err := look(p("dump"), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(l.steps, l.ranks)
	if want := "[1 2 4] map[1:[0 1] 2:[0 1] 4:[0]]"; got != want {
		t.Errorf("look found %s, want %s", got, want)
	}
}
