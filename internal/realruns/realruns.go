package realruns

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TruthFile is <scenario>.truth.json. (The type cannot share the name of
// the function Truth that reads it.)
type TruthFile struct {
	Scenario    string   `json:"scenario"`
	Description string   `json:"description"`
	Levels      []string `json:"levels"`
	StepsDumped []int    `json:"steps_dumped"`
	WorldSize   int      `json:"world_size"`
	Truth       Origin   `json:"truth"`
	// LevelOverrides maps a level to the fields that differ there
	// (usually absent).
	LevelOverrides map[string]Override `json:"level_overrides,omitempty"`
	// FirstNonfinite is level -> "stepN" -> "rankM" -> the name of the first
	// dump.json entry whose Max or Min is NaN or ±Inf; nil when the dump has
	// none.
	FirstNonfinite map[string]map[string]map[string]*string `json:"first_nonfinite"`
	// Extras holds the fields only some scenarios have (extras.go).
	Extras
}

// Origin is the "truth" object: where the bad value was born.
type Origin struct {
	Anomaly bool `json:"anomaly"`
	// Step of the origin op.
	Step int `json:"step"`
	// Ranks are the source ranks, sorted.
	Ranks []int `json:"ranks"`
	// Op is the exact dump.json entry name of the origin op.
	Op string `json:"op"`
	// Stage is the phase the op ran in: "forward", "backward" (gradient
	// reduction included) or "optimizer".
	Stage string `json:"stage"`
	// Kind is what the origin op's output first held: "nan" or "inf".
	Kind string `json:"kind"`
	// Tie is true when several ranks made it independently from clean
	// inputs at the same op.
	Tie      bool `json:"tie"`
	Captured bool `json:"captured"`
	// FirstNaN is set only when Kind is "inf": the first entry with a NaN
	// output on Ranks[0].
	FirstNaN *StepRankOp `json:"first_nan"`
	// Carrier is the first collective that made clean ranks non-finite.
	Carrier *Carrier `json:"carrier"`
	// Recovered lists anomalous dumped steps that the next dumped step no
	// longer showed.
	Recovered []Recovered `json:"recovered"`
}

// StepRankOp names one entry of one rank's dump of one step.
type StepRankOp struct {
	Step int    `json:"step"`
	Rank int    `json:"rank"`
	Op   string `json:"op"`
}

// Carrier is a collective that took the bad value from some ranks to others.
// Op is the entry name on the sending ranks.
type Carrier struct {
	Step      int    `json:"step"`
	Op        string `json:"op"`
	FromRanks []int  `json:"from_ranks"`
	ToRanks   []int  `json:"to_ranks"`
}

// Recovered is an anomaly that did not last to the next dumped step.
type Recovered struct {
	Step  int    `json:"step"`
	Ranks []int  `json:"ranks"`
	Op    string `json:"op"`
}

// Override holds the truth fields that differ in one level.
type Override struct {
	Op string `json:"op,omitempty"`
}

var (
	mu        sync.Mutex
	extracted = map[string]string{} // scenario -> extracted scenario folder
)

// moduleRoot walks up from the working directory to the folder with go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// dataDir is <module root>/testdata/realruns.
func dataDir() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "testdata", "realruns"), nil
}

// Dir extracts testdata/realruns/<scenario>.tar.gz (once per test process)
// and returns the path of the extracted scenario folder, the one holding
// L1/, mix/ and train-log/. The extraction lives in a temporary folder that
// outlives single tests. A missing or damaged archive fails the test.
func Dir(tb testing.TB, scenario string) string {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if dir, ok := extracted[scenario]; ok {
		return dir
	}
	data, err := dataDir()
	if err != nil {
		tb.Fatalf("realruns: %v", err)
	}
	archive := filepath.Join(data, scenario+".tar.gz")
	tmp, err := os.MkdirTemp("", "realruns-"+scenario+"-")
	if err != nil {
		tb.Fatalf("realruns: %v", err)
	}
	if err := extract(archive, tmp); err != nil {
		os.RemoveAll(tmp)
		tb.Fatalf("realruns: extracting %s: %v", archive, err)
	}
	dir := filepath.Join(tmp, scenario)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		os.RemoveAll(tmp)
		tb.Fatalf("realruns: %s holds no folder %s/", archive, scenario)
	}
	extracted[scenario] = dir
	return dir
}

// extract unpacks the gzip-compressed tar file archive into dest. Only
// folders and regular files are accepted, and no name may leave dest.
func extract(archive, dest string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	files := 0
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		name := path.Clean(hdr.Name)
		if name == "." || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("bad member name %q", hdr.Name)
		}
		target := filepath.Join(dest, filepath.FromSlash(name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			n, err := io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if n != hdr.Size {
				return fmt.Errorf("%s: %d of %d bytes", hdr.Name, n, hdr.Size)
			}
			files++
		default:
			return fmt.Errorf("member %q: unsupported type %q", hdr.Name, hdr.Typeflag)
		}
	}
	// Read to the end so that a truncated or corrupt gzip stream is reported.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return err
	}
	if files == 0 {
		return errors.New("no files in archive")
	}
	return nil
}

// Cleanup removes every extraction Dir made in this process; later calls of
// Dir extract again. A package whose tests use Dir can call it from TestMain
// after m.Run so that no temporary folders are left behind.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	for scenario, dir := range extracted {
		os.RemoveAll(filepath.Dir(dir))
		delete(extracted, scenario)
	}
}

// Truth reads testdata/realruns/<scenario>.truth.json. A missing or
// malformed file fails the test.
func Truth(tb testing.TB, scenario string) TruthFile {
	tb.Helper()
	data, err := dataDir()
	if err != nil {
		tb.Fatalf("realruns: %v", err)
	}
	file := filepath.Join(data, scenario+".truth.json")
	b, err := os.ReadFile(file)
	if err != nil {
		tb.Fatalf("realruns: %v", err)
	}
	var t TruthFile
	if err := json.Unmarshal(b, &t); err != nil {
		tb.Fatalf("realruns: %s: %v", file, err)
	}
	if t.Scenario != scenario {
		tb.Fatalf("realruns: %s: scenario %q, want %q", file, t.Scenario, scenario)
	}
	return t
}

// Scenarios lists the scenarios whose archive is in testdata/realruns,
// sorted. It returns nil when the folder cannot be found.
func Scenarios() []string {
	data, err := dataDir()
	if err != nil {
		return nil
	}
	matches, err := filepath.Glob(filepath.Join(data, "*.tar.gz"))
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range matches {
		out = append(out, strings.TrimSuffix(filepath.Base(m), ".tar.gz"))
	}
	sort.Strings(out)
	return out
}
