package dumplayout

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string, files ...string) {
		d := filepath.Join(root, rel)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(d, f), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	all := []string{"dump.json", "stack.json", "construct.json"}
	mk("run/step0/rank0", all...)
	mk("run/step0/rank1", all...)
	mk("run/step1/rank0", "dump.json")
	mk("run/step3/rank1", all...)
	mk("run/step3/rank0") // no dump.json
	mk("proc/step0/proc2016", all...)
	mk("old/step2/rank", all...)
	mk("ms/graph/step0/rank0", all...)
	mk("ms/pynative/step0/rank0", all...)
	mk("mixed/step0/rank0", all...)
	mk("mixed/step0/proc77", all...)

	l, err := Discover(filepath.Join(root, "run"))
	if err != nil {
		t.Fatal(err)
	}
	type sr struct{ step, rank int }
	var got []sr
	for _, d := range l.Dirs {
		got = append(got, sr{d.Step, d.Rank})
	}
	// step 3's rank 0 has no dump.json: still a rank of the step, unreadable
	if want := []sr{{0, 0}, {0, 1}, {1, 0}, {3, 0}, {3, 1}}; !reflect.DeepEqual(got, want) {
		t.Errorf("dirs = %v, want %v", got, want)
	}
	if l.Dirs[2].Stack != "" || l.Dirs[0].Construct == "" {
		t.Error("side files not found as they are")
	}
	warn := strings.Join(l.Warnings, "\n")
	for _, w := range []string{"no dump.json", "steps 2 not dumped", "step 1: ranks 1 not dumped"} {
		if !strings.Contains(warn, w) {
			t.Errorf("warnings lack %q:\n%s", w, warn)
		}
	}

	for _, tt := range []struct {
		path  string
		dirs  int
		step  int
		modes int
	}{
		{"run/step3", 2, 3, 1},
		{"run/step0/rank1", 1, 0, 1},
		{"run/step3/rank1/dump.json", 1, 3, 1},
		{"proc", 1, 0, 1},
		{"old", 1, 2, 1},
		{"ms", 2, 0, 2},
		{"mixed", 1, 0, 1},
	} {
		l, err := Discover(filepath.Join(root, tt.path))
		if err != nil {
			t.Errorf("%s: %v", tt.path, err)
			continue
		}
		if len(l.Dirs) != tt.dirs || l.Dirs[0].Step != tt.step || len(l.Modes()) != tt.modes {
			t.Errorf("%s: %d dirs, step %d, modes %v", tt.path, len(l.Dirs), l.Dirs[0].Step, l.Modes())
		}
	}
	if _, err := Discover(filepath.Join(root, "run/step3/rank0")); err == nil {
		t.Error("a folder without a dump was accepted")
	}
	if _, err := Discover(filepath.Join(root, "nope")); err == nil {
		t.Error("a missing path was accepted")
	}
}

// A folder number is bounded: past nine digits it is no folder msprobe
// writes, and the gaps are said as ranges however far apart the steps are.
func TestFolderNumbersBounded(t *testing.T) {
	for name, want := range map[string]bool{
		"step999999999": true, "step1000000000": false, "step9223372036854775807": false,
		"rank18446744073709551616": false, "rank7": true,
	} {
		_, ok := Numbered(name, name[:4])
		if ok != want {
			t.Errorf("Numbered(%q) ok = %v, want %v", name, ok, want)
		}
	}
	dirs := []RankDir{{Step: 0, Rank: 0}, {Step: MaxFolderNumber, Rank: 0}, {Step: MaxFolderNumber, Rank: MaxFolderNumber}}
	got := Gaps(dirs)
	want := []string{"steps 1-999999998 not dumped (between step 0 and step 999999999)", "step 0: ranks 1-999999999 not dumped", "step 999999999: ranks 1-999999998 not dumped"}
	if !slices.Equal(got, want) {
		t.Errorf("Gaps = %q, want %q", got, want)
	}
}
