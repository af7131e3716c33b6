package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func readVerdict(t *testing.T, path string) *verdict.Verdict {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v verdict.Verdict
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &v
}

// TestMarkdownGolden writes every testdata/markdown_NAME.json verdict and
// compares it with testdata/markdown_NAME.md (go test -update rewrites them).
func TestMarkdownGolden(t *testing.T) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "markdown_*.json"))
	if len(inputs) < 5 {
		t.Fatalf("want at least 5 verdicts in testdata, found %d", len(inputs))
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Markdown(&b, readVerdict(t, in)); err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(in, ".json") + ".md"
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("output differs from %s (run go test -update after checking the change):\n--- got\n%s\n--- want\n%s", golden, b.String(), want)
			}
		})
	}
}

// TestMarkdownSummaryMatchesText checks that the summary's sentences are
// the text report's, word for word.
func TestMarkdownSummaryMatchesText(t *testing.T) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "markdown_*.json"))
	for _, in := range inputs {
		v := readVerdict(t, in)
		var text bytes.Buffer
		if err := Text(&text, v); err != nil {
			t.Fatal(err)
		}
		flat := strings.Join(strings.Fields(text.String()), " ")
		lines := Summary(v)
		if !strings.HasPrefix(text.String(), lines[0]+"\n") {
			t.Errorf("%s: headline %q is not the text report's first line", in, lines[0])
		}
		for _, l := range lines[1:] {
			if !strings.Contains(flat, l) {
				t.Errorf("%s: sentence %q is not in the text report", in, l)
			}
		}
		if v.Anomaly && v.Origin != nil && len(lines) < 2 {
			t.Errorf("%s: no sentences after the headline", in)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	v := readVerdict(t, filepath.Join("testdata", "markdown_recovered-damaged.json"))
	var b bytes.Buffer
	if err := Markdown(&b, v); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"`Tensor.__mul__.1.backward`", "`MyPrefix.fused_<attn>|x*.0.forward`"} {
		if !strings.Contains(out, want) {
			t.Errorf("entry name not written as code, want %s in:\n%s", want, out)
		}
	}
	// outside code spans, nothing may turn into markup
	plain := regexp.MustCompile("`[^`]*`").ReplaceAllString(out, "")
	plain = strings.NewReplacer("<sub>", "", "</sub>", "").Replace(plain)
	for _, bad := range []string{"<attn>", " __", "__ "} {
		if strings.Contains(plain, bad) {
			t.Errorf("unescaped %q outside code in:\n%s", bad, out)
		}
	}
	// every table row has as many cells as its header
	var cols int
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			cols = 0
			continue
		}
		n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
		if cols == 0 {
			cols = n
		} else if n != cols {
			t.Errorf("table row with %d separators, header has %d: %s", n, cols, line)
		}
	}
}

func TestMarkdownManyRanksAggregates(t *testing.T) {
	v := readVerdict(t, filepath.Join("testdata", "markdown_tp32.json"))
	var b bytes.Buffer
	if err := Markdown(&b, v); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "| rank \\ step |") {
		t.Errorf("32 ranks written as a matrix:\n%s", out)
	}
	if !strings.Contains(out, "**13** (born there)") {
		t.Errorf("the source rank is not named in the ranges table:\n%s", out)
	}
	if n := strings.Count(out, "\n"); n > 40 {
		t.Errorf("summary of %d lines; want a compact one", n)
	}
}

// Commands in backticks stay code; entry names become code; the rest is
// escaped.
func TestMarkdownInline(t *testing.T) {
	m := &mdWriter{ops: []string{"Tensor.__mul__.0.forward"}}
	tests := []struct{ in, want string }{
		{"run `nanhunt repro NEW_DUMP -o case` now", "run `nanhunt repro NEW_DUMP -o case` now"},
		{"Tensor.__mul__.0.forward made it", "`Tensor.__mul__.0.forward` made it"},
		{"a_b and `x_y` and Tensor.__mul__.0.forward", "a\\_b and `x_y` and `Tensor.__mul__.0.forward`"},
		{"one ` backtick_", "one \\` backtick\\_"},
	}
	for _, tt := range tests {
		if got := m.inline(tt.in); got != tt.want {
			t.Errorf("inline(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The step after the origin, read until the anomaly showed again, is not
// written as unread.
func TestMarkdownCheckedStep(t *testing.T) {
	v := readVerdict(t, "testdata/markdown_bwd-sqrt-zero-L1.json")
	var b strings.Builder
	if err := Markdown(&b, v); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	row := out[strings.Index(out, "| 0 |"):]
	row = row[:strings.Index(row, "\n")]
	if !strings.HasSuffix(row, "| "+symChecked+" | ? |") {
		t.Errorf("rank 0's row %q: want the checked step as %s and the unread one as ?", row, symChecked)
	}
}
