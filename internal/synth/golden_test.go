package synth

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGolden compares the first lines of rank 0's dump.json of a small
// scenario with testdata/level-mix.step0.rank0.dump.golden.
func TestGolden(t *testing.T) {
	var spec Spec
	for _, sc := range Scenarios() {
		if sc.Name == "level-mix" {
			spec = sc.Spec
		}
	}
	spec.Steps = []int{0}
	spec.Fault = nil
	dir := t.TempDir()
	if _, err := Generate(spec, dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "step0", "rank0", "dump.json"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfterN(b, []byte("\n"), 41)
	got := bytes.Join(lines[:40], nil)
	golden := filepath.Join("testdata", "level-mix.step0.rank0.dump.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("dump.json head differs from %s:\n%s", golden, got)
	}
}
