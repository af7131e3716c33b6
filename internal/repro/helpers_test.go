package repro

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// python is the interpreter repro.py is run with in the tests (Debian's,
// where python3-torch installs torch).
const python = "/usr/bin/python3"

var torchCheck struct {
	once    sync.Once
	version string
	cuda    bool
	err     error
}

// needTorch fails the test unless /usr/bin/python3 can import torch: a
// test of what repro.py does must run it, never pass without it.
func needTorch(t *testing.T) {
	t.Helper()
	torchCheck.once.Do(func() {
		out, err := exec.Command(python, "-c", "import torch; print(torch.__version__, torch.cuda.is_available())").CombinedOutput()
		text := string(bytes.TrimSpace(out))
		if err != nil {
			torchCheck.err = errors.New(err.Error() + ": " + text)
			return
		}
		v, cuda, _ := strings.Cut(text, " ")
		torchCheck.version, torchCheck.cuda = v, cuda == "True"
	})
	if torchCheck.err != nil {
		t.Fatalf("%s with torch is needed to run repro.py (Debian: apt-get install python3-torch): %v", python, torchCheck.err)
	}
}

// fixtures returns ../shared/fixtures, and fails the test when it is absent.
func fixtures(t *testing.T) string { return fixturedir.Dir(t) }

// pyRequest is one repro.py to run, and pyResult what it did.
type pyRequest struct {
	Script string   `json:"script"`
	Args   []string `json:"args"`
	Cwd    string   `json:"cwd"`
}

type pyResult struct {
	Code   int    `json:"code"`
	Output string `json:"output"`
}

// runBatch runs several repro.py in one Python process
// (testdata/run_batch.py): starting Python with torch is most of a run.
func runBatch(reqs []*pyRequest) ([]pyResult, error) {
	in, err := json.Marshal(reqs)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(python, filepath.Join("testdata", "run_batch.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("run_batch.py: %w\n%s", err, stderr.Bytes())
	}
	var res []pyResult
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("run_batch.py: %w", err)
	}
	if len(res) != len(reqs) {
		return nil, fmt.Errorf("run_batch.py: %d results for %d scripts", len(res), len(reqs))
	}
	return res, nil
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test ./repro -run Repro -update after checking the change):\n--- got\n%s", path, got)
	}
}
