package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/internal/synth"
)

// The reports of the cases whose words are easiest to get wrong, held to
// goldens: real runs (a tie over two groups, a weight made non-finite by
// the previous update, a custom kernel in the backward) and generated ones
// (a tie, an optimizer-made NaN), and a training log or the monitor alone,
// each as text, Markdown and the page's HTML without its scripts and
// styles. Temporary folders are written as $RUN. Each report of a trace
// is also the one nanhunt report writes from the verdict that trace saved,
// byte for byte (the skill's shapes too).

var generated = struct {
	sync.Mutex
	dirs map[string]string
}{dirs: map[string]string{}}

// scenarioDir generates a synth scenario once per test process.
func scenarioDir(t *testing.T, name string) string {
	t.Helper()
	generated.Lock()
	defer generated.Unlock()
	if d, ok := generated.dirs[name]; ok {
		return d
	}
	for _, sc := range synth.Scenarios() {
		if sc.Name == name {
			dir, err := os.MkdirTemp("", "nanhunt-golden-")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := synth.Generate(sc.Spec, dir); err != nil {
				t.Fatal(err)
			}
			generated.dirs[name] = dir
			return dir
		}
	}
	t.Fatalf("no scenario %s", name)
	return ""
}

var (
	scriptOrStyle = regexp.MustCompile(`(?s)<(script|style)[^>]*>.*?</(script|style)>`)
	pageData      = regexp.MustCompile(`(?s)<script type="application/json" id="nh-data">.*?</script>`)
)

// pageText is the HTML page without what the browser runs or styles with.
func pageText(html string) string {
	html = pageData.ReplaceAllString(html, "")
	return scriptOrStyle.ReplaceAllString(html, "")
}

func TestReportGoldens(t *testing.T) {
	cases := []struct {
		name string
		dir  func(t *testing.T) string
		args []string // instead of a dump: evidence alone
	}{
		{name: "log-only", args: []string{"--log", filepath.Join("..", "..", "internal", "trainlog", "testdata", "megatron-fp16.log")}},
		{name: "monitor-only", args: []string{"--monitor", filepath.Join("..", "..", "internal", "monitor", "testdata", "v1-forward-tp"), "--tp-size", "2"}},
		{name: "realrun-tie-two-groups", dir: func(t *testing.T) string {
			return filepath.Join(realruns.Dir(t, "fp16-allreduce-two-groups"), "L1")
		}},
		{name: "realrun-weight-from-update", dir: func(t *testing.T) string {
			return filepath.Join(realruns.Dir(t, "pp-weight-from-update"), "L1")
		}},
		{name: "realrun-custom-bwd-kernel", dir: func(t *testing.T) string {
			return filepath.Join(realruns.Dir(t, "custom-bwd-kernel"), "L1")
		}},
		{name: "synth-tie", dir: func(t *testing.T) string { return scenarioDir(t, "tie-log-negative") }},
		{name: "synth-optimizer-made", dir: func(t *testing.T) string { return scenarioDir(t, "optimizer-nan-fused") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			input, clean := c.args, func(s string) string { return s }
			if c.dir != nil {
				dir := c.dir(t)
				run := filepath.Dir(dir)
				if strings.HasPrefix(filepath.Base(dir), "nanhunt-golden-") {
					run = dir
				}
				input, clean = []string{dir}, func(s string) string { return strings.ReplaceAll(s, run, "$RUN") }
			}
			trace := func(more ...string) []string { return append(append([]string{"trace"}, input...), more...) }
			saved := filepath.Join(t.TempDir(), "v.json")
			page := filepath.Join(t.TempDir(), "report.html")
			if _, errOut, code := runCLI(t, trace("--format", "json", "-o", saved, "--html", page)...); code != exitAnomaly {
				t.Fatalf("html: exit %d, stderr %q", code, errOut)
			}
			for _, format := range []string{"text", "markdown", "skill"} {
				out := sameFromSaved(t, trace("--format", format), saved, format)
				if ext, ok := map[string]string{"text": ".txt", "markdown": ".md"}[format]; ok {
					golden(t, "report-"+c.name+ext, clean(out))
				}
			}
			b, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			again := filepath.Join(t.TempDir(), "again.html")
			if _, errOut, code := runCLI(t, "report", saved, "--format", "html", "-o", again); code != exitAnomaly || errOut != "" {
				t.Fatalf("report --format html: exit %d, stderr %q", code, errOut)
			}
			if b2, err := os.ReadFile(again); err != nil || !bytes.Equal(b, b2) {
				t.Errorf("the page of the saved verdict differs from the page of the trace (%v)", err)
			}
			golden(t, "report-"+c.name+".html", clean(pageText(string(b))))
		})
	}
}

// sameFromSaved runs a trace that writes a report, and nanhunt report on
// the verdict that trace saved, and checks that they write the same
// bytes; it returns them.
func sameFromSaved(t *testing.T, traceArgs []string, saved, format string) string {
	t.Helper()
	live, errOut, code := runCLI(t, traceArgs...)
	if code != exitAnomaly || errOut != "" {
		t.Fatalf("%s: exit %d, stderr %q", format, code, errOut)
	}
	again, errOut, code := runCLI(t, "report", saved, "--format", format)
	if code != exitAnomaly || errOut != "" {
		t.Fatalf("report --format %s: exit %d, stderr %q", format, code, errOut)
	}
	if again != live {
		t.Errorf("--format %s of the saved verdict differs from the trace's:\n%s\nwant\n%s", format, again, live)
	}
	return live
}
