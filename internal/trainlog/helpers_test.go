package trainlog

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// writeFiles writes name → content into a new temporary folder and returns
// the paths in the order given.
func writeFiles(t testing.TB, files ...string) []string {
	t.Helper()
	if len(files)%2 != 0 {
		t.Fatal("writeFiles wants name, content pairs")
	}
	dir := t.TempDir()
	var paths []string
	for i := 0; i < len(files); i += 2 {
		p := filepath.Join(dir, files[i])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// mustRead reads paths and fails the test on an error.
func mustRead(t testing.TB, paths []string, opt Options) *Log {
	t.Helper()
	l, err := Read(context.Background(), paths, opt)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return l
}

// jsonOf renders v as indented JSON with paths made relative to dir.
func jsonOf(t testing.TB, v any, dir string) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if dir != "" {
		s = strings.ReplaceAll(s, dir+string(filepath.Separator), "")
	}
	return s + "\n"
}

// megLineText renders a Megatron-LM training_log line; an empty loss or
// grad norm is left out.
func megLineText(iter int, loss, grad string, skipped, nan int) string {
	s := " [2024-05-01 10:00:00] iteration " + pad(iter) + "/     100 | consumed samples:           72 |" +
		" elapsed time per iteration (ms): 123.4 | learning rate: 1.000000E-04 | global batch size:     8 |"
	if loss != "" {
		s += " lm loss: " + loss + " |"
	}
	s += " loss scale: 1.0 |"
	if grad != "" {
		s += " grad norm: " + grad + " |"
	}
	return s + " number of skipped iterations: " + pad3(skipped) + " | number of nan iterations: " + pad3(nan) + " |\n"
}

func pad(n int) string {
	s := itoa(n)
	for len(s) < 8 {
		s = " " + s
	}
	return s
}

func pad3(n int) string {
	s := itoa(n)
	for len(s) < 3 {
		s = " " + s
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

// fixtures returns ../../shared/fixtures/msprobe-generated, or skips.
func fixtures(t testing.TB) string { return fixturedir.Dir(t, "msprobe-generated") }
