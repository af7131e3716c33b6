package repro

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// python is the interpreter repro.py is run with in the tests (Debian's,
// where python3-torch installs torch).
const python = "/usr/bin/python3"

var torchCheck struct {
	once    sync.Once
	version string
	err     error
}

// needTorch skips the test unless /usr/bin/python3 can import torch.
func needTorch(t *testing.T) {
	t.Helper()
	torchCheck.once.Do(func() {
		out, err := exec.Command(python, "-c", "import torch; print(torch.__version__)").CombinedOutput()
		torchCheck.version = string(bytes.TrimSpace(out))
		if err != nil {
			torchCheck.err = errors.New(err.Error() + ": " + torchCheck.version)
		}
	})
	if torchCheck.err != nil {
		t.Skipf("%s with torch is needed to run repro.py (Debian: apt-get install python3-torch): %v", python, torchCheck.err)
	}
}

// fixtures returns ../shared/fixtures, or skips when it is absent.
func fixtures(t *testing.T) string { return fixturedir.Dir(t) }

// runScript runs a case's repro.py and returns its exit status and output.
func runScript(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(python, append([]string{filepath.Join(dir, ReproPy)}, args...)...)
	cmd.Dir = t.TempDir() // repro.py must find its tensors from anywhere
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run %s: %v", ReproPy, err)
		}
		code = ee.ExitCode()
	}
	t.Logf("python %s: exit %d in %.1fs", filepath.Join(filepath.Base(dir), ReproPy), code, time.Since(start).Seconds())
	return code, string(out)
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
