package dumplayout

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/linktest"
)

// linkTree writes a dump_path of steps 0-2 with ranks 0-2 under root/dump
// and returns its path.
func linkTree(t *testing.T, root string) string {
	t.Helper()
	dump := filepath.Join(root, "dump")
	for s := range 3 {
		for r := range 3 {
			d := filepath.Join(dump, "step"+string(rune('0'+s)), "rank"+string(rune('0'+r)))
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"dump.json", "stack.json", "construct.json"} {
				if err := os.WriteFile(filepath.Join(d, f), []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return dump
}

// moveAndLink moves root/from to root/to and links it back, with a
// relative link when rel is set.
func moveAndLink(t *testing.T, root, from, to string, rel bool) {
	t.Helper()
	src, dst := filepath.Join(root, from), filepath.Join(root, to)
	target := dst
	if rel {
		var err error
		if target, err = filepath.Rel(filepath.Dir(src), dst); err != nil {
			t.Fatal(err)
		}
	}
	linktest.Move(t, src, dst, target)
}

// A step folder and a rank folder moved to other disks and linked back
// give the layout the real folders give, and are named as links.
func TestDiscoverFollowsLinks(t *testing.T) {
	root := t.TempDir()
	want, err := Discover(linkTree(t, filepath.Join(root, "real")))
	if err != nil {
		t.Fatal(err)
	}
	lroot := filepath.Join(root, "linked")
	dump := linkTree(t, lroot)
	moveAndLink(t, lroot, "dump/step1", "disk2/step1", false)
	moveAndLink(t, lroot, "dump/step2/rank1", "nvme1/rank1", true)
	moveAndLink(t, lroot, "disk2/step1/rank2", "nvme2/rank2", false) // a link inside a linked folder
	got, err := Discover(dump)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Dirs) != len(want.Dirs) || len(got.Warnings) != 0 || len(want.Warnings) != 0 {
		t.Fatalf("%d rank folders, warnings %q; want %d, none", len(got.Dirs), got.Warnings, len(want.Dirs))
	}
	for i, d := range got.Dirs {
		w := want.Dirs[i]
		rel, _ := filepath.Rel(dump, d.Dir)
		wrel, _ := filepath.Rel(want.Root, w.Dir)
		if d.Step != w.Step || d.Rank != w.Rank || rel != wrel || (d.Stack == "") != (w.Stack == "") || (d.Construct == "") != (w.Construct == "") {
			t.Errorf("rank folder %d: %+v, want %+v", i, d, w)
		}
	}
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(filepath.Join(lroot, p))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	wantLinks := []Link{
		{filepath.Join(dump, "step1"), real("disk2/step1")},
		{filepath.Join(dump, "step1", "rank2"), real("nvme2/rank2")},
		{filepath.Join(dump, "step2", "rank1"), real("nvme1/rank1")},
	}
	if !reflect.DeepEqual(got.Links, wantLinks) {
		t.Errorf("links %+v, want %+v", got.Links, wantLinks)
	}
	if len(want.Links) != 0 {
		t.Errorf("real folders named as links: %+v", want.Links)
	}
}

// Links that lead to no folder are notes naming them, never a crash or a
// silent skip; a rank folder among them stays a rank of its step, which
// cannot be read.
func TestDiscoverBadLinks(t *testing.T) {
	tests := []struct {
		name    string
		link    string // under the dump
		target  string // relative to the link's folder
		ranks   int    // rank folders of step 0 found
		steps   []int
		note    string // a warning must hold this
		noLinks bool
	}{
		{"a dangling step folder", "step3", "/nonexistent/step3", 3, []int{0, 1, 2}, "step3: a symbolic link that cannot be followed", true},
		{"a step folder in a loop", "step3", "step3", 3, []int{0, 1, 2}, "step3: a symbolic link that cannot be followed", true},
		{"a step folder that is a file", "step3", "step0/rank0/dump.json", 3, []int{0, 1, 2}, "step3: a symbolic link to", true},
		{"a dangling rank folder", "step0/rank3", "/nonexistent/rank3", 4, []int{0, 1, 2}, "rank3: a symbolic link that cannot be followed", true},
		{"a rank folder in a loop", "step0/rank3", "rank3", 4, []int{0, 1, 2}, "rank3: a symbolic link that cannot be followed", true},
		{"a rank folder that is a file", "step0/rank3", "rank0/dump.json", 4, []int{0, 1, 2}, "rank3: a symbolic link to", true},
		{"a step folder that leads to the dump_path", "step3", ".", 3, []int{0, 1, 2}, "step3: step folder without rank folders", false},
		{"a rank folder that leads to its step folder", "step0/rank3", ".", 4, []int{0, 1, 2}, "rank 3 has no dump.json", false},
		{"an odd name is ignored, not followed", "step0/rank03", "rank0", 3, []int{0, 1, 2}, "ignored rank03", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dump := linkTree(t, t.TempDir())
			if err := os.Symlink(tt.target, filepath.Join(dump, tt.link)); err != nil {
				t.Fatal(err)
			}
			l, err := Discover(dump)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(l.Select(map[int]bool{0: true}, nil)); got != tt.ranks {
				t.Errorf("%d rank folders in step 0, want %d", got, tt.ranks)
			}
			if got := l.Steps(); !reflect.DeepEqual(got, tt.steps) {
				t.Errorf("steps %v, want %v", got, tt.steps)
			}
			if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, tt.note) {
				t.Errorf("no warning holds %q:\n%s", tt.note, w)
			}
			if tt.noLinks && len(l.Links) != 0 {
				t.Errorf("named as links: %+v", l.Links)
			}
		})
	}
}

// The path given may be a link itself, to a dump_path, a step folder or a
// rank folder; it is followed and named.
func TestDiscoverLinkGiven(t *testing.T) {
	root := t.TempDir()
	dump := linkTree(t, root)
	for _, tt := range []struct{ name, target string }{
		{"dump-link", dump},
		{"step-link", filepath.Join(dump, "step1")},
		{"rank-link", filepath.Join(dump, "step1", "rank2")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(root, tt.name)
			if err := os.Symlink(tt.target, p); err != nil {
				t.Fatal(err)
			}
			direct, err := Discover(tt.target)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Discover(p + string(filepath.Separator))
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Dirs) != len(direct.Dirs) || len(l.Dirs) == 0 {
				t.Errorf("%d rank folders through the link, %d without", len(l.Dirs), len(direct.Dirs))
			}
			real, _ := filepath.EvalSymlinks(tt.target)
			if want := []Link{{p, real}}; !reflect.DeepEqual(l.Links, want) {
				t.Errorf("links %+v, want %+v", l.Links, want)
			}
		})
	}
}
