package realruns

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var stepDir = regexp.MustCompile(`^step(\d+)$`)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

func TestScenariosPresent(t *testing.T) {
	got := Scenarios()
	if len(got) == 0 {
		t.Fatal("no archives in testdata/realruns")
	}
	if !sort.StringsAreSorted(got) {
		t.Errorf("Scenarios() not sorted: %v", got)
	}
}

func TestEveryScenario(t *testing.T) {
	for _, s := range Scenarios() {
		t.Run(s, func(t *testing.T) {
			tr := Truth(t, s)
			dir := Dir(t, s)
			if again := Dir(t, s); again != dir {
				t.Errorf("second Dir = %s, first %s (not cached)", again, dir)
			}
			if filepath.Base(dir) != s {
				t.Errorf("Dir = %s, want a folder named %s", dir, s)
			}
			if tr.WorldSize != 4 {
				t.Errorf("world_size %d", tr.WorldSize)
			}
			if len(tr.Levels) == 0 {
				t.Fatal("no levels in truth")
			}
			for _, level := range tr.Levels {
				checkLevel(t, dir, level, tr)
			}
			for r := 0; r < tr.WorldSize; r++ {
				p := filepath.Join(dir, "train-log", fmt.Sprintf("rank%d.json", r))
				if _, err := os.Stat(p); err != nil {
					t.Errorf("train log: %v", err)
				}
			}
			checkTruth(t, tr)
		})
	}
}

func checkLevel(t *testing.T, dir, level string, tr TruthFile) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, level))
	if err != nil {
		t.Fatalf("level %s: %v", level, err)
	}
	var steps []int
	for _, e := range ents {
		m := stepDir.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			t.Errorf("%s/%s: not a step folder", level, e.Name())
			continue
		}
		n, _ := strconv.Atoi(m[1])
		steps = append(steps, n)
		ranks, err := os.ReadDir(filepath.Join(dir, level, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if len(ranks) != tr.WorldSize {
			t.Errorf("%s/%s: %d rank folders, want %d", level, e.Name(), len(ranks), tr.WorldSize)
		}
		for r := 0; r < tr.WorldSize; r++ {
			for _, f := range []string{"dump.json", "stack.json", "construct.json"} {
				p := filepath.Join(dir, level, e.Name(), fmt.Sprintf("rank%d", r), f)
				fi, err := os.Stat(p)
				if err != nil {
					t.Errorf("%v", err)
				} else if fi.Size() == 0 {
					t.Errorf("%s: empty", p)
				}
			}
		}
	}
	sort.Ints(steps)
	if fmt.Sprint(steps) != fmt.Sprint(tr.StepsDumped) {
		t.Errorf("%s: step folders %v, truth steps_dumped %v", level, steps, tr.StepsDumped)
	}
	table, ok := tr.FirstNonfinite[level]
	if !ok {
		t.Errorf("first_nonfinite has no level %s", level)
		return
	}
	for _, s := range tr.StepsDumped {
		row, ok := table[fmt.Sprintf("step%d", s)]
		if !ok || len(row) != tr.WorldSize {
			t.Errorf("first_nonfinite[%s][step%d] = %v", level, s, row)
		}
	}
}

func checkTruth(t *testing.T, tr TruthFile) {
	t.Helper()
	o := tr.Truth
	if !o.Anomaly || !o.Captured {
		return
	}
	if o.Op == "" || len(o.Ranks) == 0 {
		t.Fatalf("truth without op or ranks: %+v", o)
	}
	if !sort.IntsAreSorted(o.Ranks) {
		t.Errorf("ranks not sorted: %v", o.Ranks)
	}
	switch o.Stage {
	case "forward", "backward", "optimizer":
	default:
		t.Errorf("stage %q", o.Stage)
	}
	switch o.Kind {
	case "nan":
		if o.FirstNaN != nil {
			t.Errorf("first_nan set although kind is nan")
		}
	case "inf":
		if o.FirstNaN == nil {
			t.Errorf("kind inf without first_nan")
		}
	default:
		t.Errorf("kind %q", o.Kind)
	}
	// Several source ranks are a tie, except the members of one collective
	// that made it from finite inputs: one birth they share.
	oneCollective := strings.HasPrefix(o.Op, "Distributed.") && !o.Tie
	if o.Tie != (len(o.Ranks) > 1) && !oneCollective {
		t.Errorf("tie %v with ranks %v", o.Tie, o.Ranks)
	}
	for _, level := range tr.Levels {
		op := o.Op
		if ov, ok := tr.LevelOverrides[level]; ok && ov.Op != "" {
			op = ov.Op
		}
		row := tr.FirstNonfinite[level][fmt.Sprintf("step%d", o.Step)]
		for _, r := range o.Ranks {
			got := row[fmt.Sprintf("rank%d", r)]
			if got == nil || *got != op {
				t.Errorf("%s step%d rank%d: first non-finite %v, truth op %s", level, o.Step, r, deref(got), op)
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

func TestMissingArchiveFails(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	func() {
		defer func() { recover() }()
		Dir(ft, "no-such-scenario")
	}()
	if !ft.failed {
		t.Error("Dir did not fail for a missing archive")
	}
}

func TestDamagedArchive(t *testing.T) {
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "bad.tar.gz")
	if err := os.WriteFile(bad, []byte("\x1f\x8b\x08\x00not really gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := extract(bad, filepath.Join(tmp, "out")); err == nil {
		t.Error("extract accepted a damaged archive")
	}
	// a valid archive cut short
	for _, s := range Scenarios() {
		data, _ := dataDir()
		b, err := os.ReadFile(filepath.Join(data, s+".tar.gz"))
		if err != nil {
			t.Fatal(err)
		}
		cut := filepath.Join(tmp, "cut.tar.gz")
		if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		if err := extract(cut, filepath.Join(tmp, "cut")); err == nil {
			t.Errorf("%s: extract accepted a truncated archive", s)
		}
		break
	}
}

// fatalRecorder notes Fatalf instead of ending the test.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.failed = true
	panic("fatal")
}
