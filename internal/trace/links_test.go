package trace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/linktest"
	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/verdict"
)

// A dump whose origin step folder and origin rank folder were moved to
// other disks and linked back gives, field for field, the verdict of the
// same folders before the move, and names the two links: on a real
// fixture and on every generated scenario (origins captured or not, cut
// short, ties, none at all).
func TestLinkedFoldersGiveTheSameVerdict(t *testing.T) {
	type input struct {
		name string
		make func(t *testing.T, dir string) (step int, rank int)
	}
	fromFixture := func(t *testing.T, dir string) (int, int) {
		src := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
		if err := copyDir(src, dir); err != nil {
			t.Fatal(err)
		}
		return 5, 2
	}
	inputs := []input{{"fixture bwd-sqrt-zero-rank2-step5/L1", fromFixture}}
	for _, sc := range synth.Scenarios() {
		inputs = append(inputs, input{"synth " + sc.Name, func(t *testing.T, dir string) (int, int) {
			truth, err := synth.Generate(sc.Spec, dir)
			if err != nil {
				t.Fatal(err)
			}
			if !truth.Anomaly {
				return lastStep(t, dir), 0
			}
			return truth.Step, truth.Ranks[0]
		}})
	}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			dir := filepath.Join(root, "dump")
			step, rank := in.make(t, dir)
			want := runJSON(t, dir, nil)
			stepDir, rankDir := rankFolder(t, dir, step, rank)
			// the step to another disk, by an absolute link; inside it, the
			// rank to a third, by a relative one
			stepTarget := filepath.Join(root, "disk2", filepath.Base(stepDir))
			linktest.Move(t, stepDir, stepTarget, stepTarget)
			rankTarget := filepath.Join(root, "nvme1", filepath.Base(rankDir))
			linktest.Move(t, filepath.Join(stepTarget, filepath.Base(rankDir)), rankTarget, filepath.Join("..", "..", "nvme1", filepath.Base(rankDir)))
			var links []verdict.Link
			got := runJSON(t, dir, &links)
			if got != want {
				t.Errorf("the verdict changed with the folders linked:\nreal:   %s\nlinked: %s", want, got)
			}
			wantLinks := []verdict.Link{{Path: stepDir, Target: realPath(t, stepTarget)}, {Path: rankDir, Target: realPath(t, rankTarget)}}
			if len(links) != 2 || links[0] != wantLinks[0] || links[1] != wantLinks[1] {
				t.Errorf("links %+v, want %+v", links, wantLinks)
			}
		})
	}
}

// lastStep is the last step folder of the dump at dir.
func lastStep(t *testing.T, dir string) int {
	t.Helper()
	l, err := dump.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	steps := l.Steps()
	return steps[len(steps)-1]
}

// rankFolder returns the step folder and the rank folder of one rank of
// one step.
func rankFolder(t *testing.T, dir string, step, rank int) (string, string) {
	t.Helper()
	l, err := dump.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := l.Select(map[int]bool{step: true}, map[int]bool{rank: true})
	if len(d) != 1 {
		t.Fatalf("%d folders for step %d, rank %d", len(d), step, rank)
	}
	return filepath.Dir(d[0].Dir), d[0].Dir
}

// realPath is path with every link resolved.
func realPath(t *testing.T, path string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runJSON traces dir and returns its verdict as JSON without the links,
// which it stores in links when given.
func runJSON(t *testing.T, dir string, links *[]verdict.Link) string {
	t.Helper()
	v, err := Run(context.Background(), Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if links != nil {
		*links = v.Scanned.Links
		if v.Scanned.LinksTotal != len(v.Scanned.Links) {
			t.Errorf("links_total %d for %d links", v.Scanned.LinksTotal, len(v.Scanned.Links))
		}
	}
	v.Scanned.Links, v.Scanned.LinksTotal = nil, 0
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Only the links of the steps and ranks read are named.
func TestLinksOfWhatWasRead(t *testing.T) {
	var spec synth.Spec
	for _, sc := range synth.Scenarios() {
		if sc.Name == "log-negative" {
			spec = sc.Spec
		}
	}
	root := t.TempDir()
	dir := filepath.Join(root, "dump")
	if _, err := synth.Generate(spec, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"step1", "step3", "step2/rank0", "step2/rank1"} {
		from := filepath.Join(dir, filepath.FromSlash(f))
		to := filepath.Join(root, "disk2", filepath.FromSlash(f))
		linktest.Move(t, from, to, to)
	}
	tests := []struct {
		name         string
		steps, ranks map[int]bool
		want         []string // the folders named, under the dump
	}{
		{"all", nil, nil, []string{"step1", "step2/rank0", "step2/rank1", "step3"}},
		{"steps 2-3, read until step 3 shows the anomaly lasts", map[int]bool{2: true, 3: true}, nil, []string{"step2/rank0", "step2/rank1", "step3"}},
		{"rank 1 left out", nil, map[int]bool{0: true, 2: true, 3: true}, []string{"step1", "step2/rank0", "step3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Run(context.Background(), Options{Path: dir, Steps: tt.steps, Ranks: tt.ranks})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range v.Scanned.Links {
				rel, _ := filepath.Rel(dir, l.Path)
				got = append(got, filepath.ToSlash(rel))
			}
			if !slices.Equal(got, tt.want) || v.Scanned.LinksTotal != len(tt.want) {
				t.Errorf("links %v (total %d), want %v", got, v.Scanned.LinksTotal, tt.want)
			}
		})
	}
}

// A rank folder whose dump.json, stack.json and construct.json are
// symbolic links to files elsewhere (a copy made with cp -rs) is read
// through them: the verdict is the one of the real files, and only
// folders are named as links.
func TestLinkedFilesGiveTheSameVerdict(t *testing.T) {
	var spec synth.Spec
	for _, sc := range synth.Scenarios() {
		if sc.Name == "sqrt-zero-backward" {
			spec = sc.Spec
		}
	}
	root := t.TempDir()
	dir := filepath.Join(root, "dump")
	truth, err := synth.Generate(spec, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := runJSON(t, dir, nil)
	_, rankDir := rankFolder(t, dir, truth.Step, truth.Ranks[0])
	for _, f := range []string{"dump.json", "stack.json", "construct.json"} {
		to := filepath.Join(root, "shared", f)
		linktest.Move(t, filepath.Join(rankDir, f), to, to)
	}
	var links []verdict.Link
	if got := runJSON(t, dir, &links); got != want {
		t.Errorf("the verdict changed with the files linked:\nreal:   %s\nlinked: %s", want, got)
	}
	if len(links) != 0 {
		t.Errorf("files named as links: %+v", links)
	}
}
