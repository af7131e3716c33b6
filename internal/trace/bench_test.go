package trace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nanhunt/nanhunt/internal/synth"
)

// The verdict does not depend on how many files are read at once.
func TestJobsDoNotChangeTheVerdict(t *testing.T) {
	for _, name := range []string{"custom-attention-backward", "tie-log-negative", "sendrecv-carrier"} {
		var spec synth.Spec
		for _, s := range synth.Scenarios() {
			if s.Name == name {
				spec = s.Spec
			}
		}
		if spec.Ranks == 0 {
			t.Fatalf("no scenario %s", name)
		}
		dir := filepath.Join(t.TempDir(), "dump")
		if _, err := synth.Generate(spec, dir); err != nil {
			t.Fatal(err)
		}
		var verdicts []string
		for _, jobs := range []int{1, 3, 8} {
			v, err := Run(context.Background(), Options{Path: dir, Jobs: jobs})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(v)
			verdicts = append(verdicts, string(b))
		}
		if !reflect.DeepEqual(verdicts[0], verdicts[1]) || !reflect.DeepEqual(verdicts[0], verdicts[2]) {
			t.Errorf("%s: verdicts differ between --jobs 1, 3 and 8", name)
		}
	}
}

// BenchmarkTraceDemo traces the 32-rank demo run (steps 4-6 of 4-8 are
// read before the answer is settled); MB/s counts the bytes read.
func BenchmarkTraceDemo(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "dump")
	if _, err := synth.Generate(synth.Demo(), dir); err != nil {
		b.Fatal(err)
	}
	benchTrace(b, dir)
}

// benchTrace traces dir once to count the bytes a trace reads, then
// times it.
func benchTrace(b *testing.B, dir string) {
	v, err := Run(context.Background(), Options{Path: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(v.Scanned.Bytes)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), Options{Path: dir}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestProgressReports(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "fwd-log-neg-rank2-step5", "L1")
	var last Progress
	n := 0
	_, err := Run(context.Background(), Options{Path: dir, Progress: func(p Progress) { last = p; n++ }})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || !last.Final || last.FilesDone == 0 || last.BytesRead == 0 || last.Files != 32 || last.Steps != 8 || last.Bytes == 0 {
		t.Errorf("%d reports, last %+v", n, last)
	}
}

// A run whose only non-finite values are attention masks is cleared by the
// byte search alone, file by file, and holds no anomaly.
func TestMasksOnlyFilesAreCleared(t *testing.T) {
	var spec synth.Spec
	for _, s := range synth.Scenarios() {
		if s.Name == "legit-masks" {
			spec = s.Spec
		}
	}
	dir := filepath.Join(t.TempDir(), "dump")
	if _, err := synth.Generate(spec, dir); err != nil {
		t.Fatal(err)
	}
	v, err := Run(context.Background(), Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if v.Anomaly || v.Scanned.Cleared != v.Scanned.Files || v.Scanned.Files == 0 {
		t.Errorf("anomaly %v, %d of %d files cleared", v.Anomaly, v.Scanned.Cleared, v.Scanned.Files)
	}
}
