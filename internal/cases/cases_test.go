package cases_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/cases"
	"github.com/nanhunt/nanhunt/internal/reference"
	"github.com/nanhunt/nanhunt/internal/tinylimits"
	"github.com/nanhunt/nanhunt/internal/trace"
)

var update = flag.Bool("update", false, "write the reference analyser's verdict into every case file's verdict section")

const casesDir = "testdata/cases"

// TestCases runs every case through the reference analyser, the fast path
// and the fast path with tiny limits, and holds each to the case's
// expected verdict (and the fast path to its "fast" checks).
func TestCases(t *testing.T) {
	all, err := cases.Load(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatalf("no case under %s", casesDir)
	}
	for _, c := range all {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			path, err := c.Lay(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ref, rerr := reference.Analyse(path, referenceOptions(c.Options))
			got := verdictLines(ref, rerr)
			if *update {
				rewrite(t, c, got)
				return
			}
			for _, l := range lineDiff(c.Verdict, got) {
				t.Errorf("reference: %s", l)
			}
			runFast(t, c, path, "fast path", context.Background())
			runFast(t, c, path, "fast path, tiny limits", tinylimits.With(context.Background()))
		})
	}
}

// runFast holds the fast path under ctx to the case. The "fast" checks
// read lists that tiny limits cap (suppressed, warnings): they hold the
// fast path with its normal limits; an expected error and the
// explanations hold under both.
func runFast(t *testing.T, c *cases.Case, path, label string, ctx context.Context) {
	t.Helper()
	o := c.Options
	v, err := trace.Run(ctx, trace.Options{Path: path, Strict: o.Strict, Steps: set(o.Steps), Ranks: set(o.Ranks), Timeline: true})
	refused := fastError(c.Fast)
	for _, check := range c.Fast {
		if tinylimits.On(ctx) && check != "error "+refused && !explainCheck(check) {
			continue
		}
		if e := fastCheck(check, v, err); e != nil {
			t.Errorf("%s: %v", label, e)
		}
	}
	if refused != "" {
		return // refused on purpose: there is no verdict to compare
	}
	var got []string
	if err != nil {
		got = verdictLines(nil, err)
	} else {
		got = verdictLines(reference.FromTrace(v), nil)
	}
	for _, l := range lineDiff(c.Verdict, got) {
		t.Errorf("%s: %s", label, l)
	}
}
func referenceOptions(o cases.Options) reference.Options {
	return reference.Options{Strict: o.Strict, Steps: set(o.Steps), Ranks: set(o.Ranks)}
}

func set(xs []int) map[int]bool {
	if xs == nil {
		return nil
	}
	m := map[int]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// rewrite puts the reference's verdict into the case file.
func rewrite(t *testing.T, c *cases.Case, lines []string) {
	if slices.Equal(c.Verdict, lines) {
		return
	}
	c.Verdict = lines
	p := filepath.Join(casesDir, filepath.FromSlash(c.Name)+".txtar")
	if err := os.WriteFile(p, c.Format(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: verdict rewritten", c.Name)
}

// TestFormatRoundTrip: every case file reads back as it is written, and a
// laid out case reads back (FromDir) into the same files.
func TestFormatRoundTrip(t *testing.T) {
	all, err := cases.Load(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all {
		b, err := os.ReadFile(filepath.Join(casesDir, filepath.FromSlash(c.Name)+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(c.Format()); got != string(b) {
			t.Errorf("%s: the file does not read back as written", c.Name)
		}
		root := t.TempDir()
		if _, err := c.Lay(root); err != nil {
			t.Fatal(err)
		}
		files, dirs, links, err := cases.FromDir(root)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(files, sortedFiles(c.Files)) || !slices.Equal(dirs, c.Dirs) || !slices.Equal(links, c.Links) {
			t.Errorf("%s: laid out and read back, the dump is not the same", c.Name)
		}
	}
}

func sortedFiles(fs []cases.File) []cases.File {
	out := slices.Clone(fs)
	slices.SortFunc(out, func(a, b cases.File) int { return strings.Compare(a.Path, b.Path) })
	return out
}
