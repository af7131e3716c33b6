package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/report"
)

// reportVerdicts are the verdicts the report package's golden tests use.
var reportVerdicts = filepath.Join("..", "..", "internal", "report", "testdata")

// runReportCLI runs nanhunt with the report command present.
func runReportCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	root := rootCommand(&out, &errb)
	if c, _, err := root.Find([]string{"report"}); err != nil || c == root {
		root.AddCommand(reportCommand())
	}
	root.SetArgs(args)
	code = exitClean
	root.SetContext(withExitCode(context.Background(), &code))
	if err := root.Execute(); err != nil {
		writeError(&errb, err)
		code = exitError
	}
	return out.String(), errb.String(), code
}

func TestReportMarkdownToStdout(t *testing.T) {
	in := filepath.Join(reportVerdicts, "markdown_bwd-sqrt-zero-L1.json")
	out, errOut, code := runReportCLI(t, "report", in)
	if code != exitAnomaly || errOut != "" {
		t.Fatalf("exit %d (want %d), stderr %q", code, exitAnomaly, errOut)
	}
	v, err := readVerdict(in)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := report.Markdown(&want, v); err != nil {
		t.Fatal(err)
	}
	if out != want.String() {
		t.Errorf("stdout differs from report.Markdown:\n%s", out)
	}
	clean := filepath.Join(reportVerdicts, "markdown_resnet-clean.json")
	if _, _, code := runReportCLI(t, "report", clean, "--format", "text"); code != exitClean {
		t.Errorf("a clean verdict exits %d, want %d", code, exitClean)
	}
}

func TestReportHTMLAndMarkdownFiles(t *testing.T) {
	in := filepath.Join(reportVerdicts, "markdown_bwd-sqrt-zero-L1.json")
	dir := t.TempDir()
	page, md := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md")
	out, errOut, code := runReportCLI(t, "report", in, "--html", page, "--markdown", md)
	if code != exitAnomaly || errOut != "" || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	b, err := os.ReadFile(page)
	if err != nil || !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) || !bytes.Contains(b, []byte("Torch.sqrt.0.backward")) {
		t.Errorf("no HTML page written (%v)", err)
	}
	if b, err := os.ReadFile(md); err != nil || !bytes.HasPrefix(b, []byte("**nanhunt:**")) {
		t.Errorf("no Markdown written (%v)", err)
	}
	// the same page through --format and -o
	other := filepath.Join(dir, "o.html")
	if _, errOut, code := runReportCLI(t, "report", in, "--format", "html", "-o", other); code != exitAnomaly || errOut != "" {
		t.Fatalf("--format html -o: exit %d, stderr %q", code, errOut)
	}
	if c, _ := os.ReadFile(other); !bytes.Equal(c, b) {
		t.Errorf("--format html -o and --html wrote different pages")
	}
}

func TestReportRefusals(t *testing.T) {
	in := filepath.Join(reportVerdicts, "markdown_bwd-sqrt-zero-L1.json")
	dir := t.TempDir()
	notVerdict := filepath.Join(dir, "x.json")
	if err := os.WriteFile(notVerdict, []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dumpDir := filepath.Join(dir, "dump")
	if err := os.MkdirAll(dumpDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"report", notVerdict}, "not a nanhunt verdict"},
		{[]string{"report", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"report", in, "--format", "pdf"}, "--format"},
		{[]string{"report", in, "--html", filepath.Join(dir, "a.html"), "-o", filepath.Join(dir, "b.html")}, "--html and --markdown"},
		{[]string{"report", in, "--dump", dumpDir, "--html", filepath.Join(dumpDir, "r.html")}, "refusing to write"},
		{[]string{"report", in, "--dump", dumpDir, "--format", "html", "-o", filepath.Join(dumpDir, "r.html")}, "refusing to write"},
	} {
		_, errOut, code := runReportCLI(t, c.args...)
		if code != exitError || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, exitError, c.msg)
		}
	}
	if ents, _ := os.ReadDir(dumpDir); len(ents) != 0 {
		t.Errorf("something was written inside the dump: %v", ents)
	}
}

// TestReportHTMLFromTrace: the verdict of a real dump, saved and read
// back, holds the origin timeline the analysis read from that dump.
func TestReportHTMLFromTrace(t *testing.T) {
	path := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	v, err := traceRun(t, path)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := htmlReport(&page, v); err != nil {
		t.Fatal(err)
	}
	b := page.Bytes()
	for _, want := range []string{"Origin timeline", "Tensor.sum.0.backward", "the Inf became NaN here"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if _, errOut, code := runCLI(t, "trace", path, "--html", filepath.Join(path, "x.html")); code != exitError || !strings.Contains(errOut, "refusing") {
		t.Errorf("writing inside the dump: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(path, "x.html")); err == nil {
		t.Errorf("the page was written inside the dump")
	}
}

// traceRun saves a verdict with nanhunt trace --format json and reads it
// back, as nanhunt report does.
func traceRun(t *testing.T, path string) (*verdict.Verdict, error) {
	t.Helper()
	saved := filepath.Join(t.TempDir(), "v.json")
	if _, errOut, code := runReportCLI(t, "trace", path, "--format", "json", "--timeline", "-o", saved); code == exitError {
		t.Fatalf("trace: %s", errOut)
	}
	return readVerdict(saved)
}
