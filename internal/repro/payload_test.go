package repro

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// payloads writes testdata/make_payloads.py's files into a new folder and
// returns it with the marker file a payload makes when it runs.
func payloads(t *testing.T) (dir, marker string) {
	t.Helper()
	needTorch(t)
	dir = t.TempDir()
	marker = filepath.Join(t.TempDir(), "payload-ran")
	if out, err := exec.Command(python, filepath.Join("testdata", "make_payloads.py"), dir, marker).CombinedOutput(); err != nil {
		t.Fatalf("make_payloads.py: %v\n%s", err, out)
	}
	return dir, marker
}

// unsafeLoads load each payload file the way repro.py must not: they show
// that the payloads are live.
var unsafeLoads = map[string]string{
	"payload.pt":        "import sys, torch; torch.load(sys.argv[1])",
	"payload-legacy.pt": "import sys, torch; torch.load(sys.argv[1])",
	"payload.npy":       "import sys, numpy; numpy.load(sys.argv[1], allow_pickle=True)",
}

// TestReproPicklePayloadDoesNotRun: a tensor file holding a pickle payload
// (a torch.save zip, the legacy format, a NumPy object array) that would
// run os.system when loaded the unsafe way is refused by nanhunt repro
// before it is copied, and, put into a case folder after it was written,
// is refused by repro.py run with Debian's torch: exit status 2, the file
// named, and the payload never runs.
func TestReproPicklePayloadDoesNotRun(t *testing.T) {
	dir, marker := payloads(t)
	for _, name := range []string{"payload.pt", "payload-legacy.pt", "payload.npy"} {
		t.Run(name, func(t *testing.T) {
			payload := filepath.Join(dir, name)
			t.Run("live", func(t *testing.T) {
				out, err := exec.Command(python, "-c", unsafeLoads[name], payload).CombinedOutput()
				if _, serr := os.Stat(marker); serr != nil {
					t.Fatalf("the payload did not run when loaded unsafely (%v): the test proves nothing\n%s", err, out)
				}
				os.Remove(marker)
			})
			t.Run("nanhunt repro", func(t *testing.T) {
				root, data := untrustedDump(t, "", name)
				copyInto(t, payload, filepath.Join(data, name))
				out := filepath.Join(t.TempDir(), "case")
				_, err := writeLog(t, root, out)
				if err == nil || !strings.Contains(err.Error(), filepath.Join(data, name)+" (input_args.0 of Torch.log.0.forward) refused") || !errors.Is(err, errPickle) {
					t.Errorf("error %v", err)
				}
				if _, err := os.Stat(out); err == nil {
					t.Errorf("%s was written", out)
				}
			})
			t.Run("repro.py", func(t *testing.T) {
				good := "good" + filepath.Ext(name)
				root, data := untrustedDump(t, "", name)
				copyInto(t, filepath.Join(dir, good), filepath.Join(data, name))
				c, err := writeLog(t, root, filepath.Join(t.TempDir(), "case"))
				if err != nil {
					t.Fatal(err)
				}
				inCase := filepath.Join(c.Dir, name)
				copyInto(t, payload, inCase)
				cmd := exec.Command(python, filepath.Join(c.Dir, ReproPy))
				cmd.Dir = t.TempDir()
				b, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 2 {
					t.Errorf("repro.py: %v, want exit status 2\n%s", err, b)
				}
				if want := "CANNOT RUN: " + inCase + " cannot be loaded as a plain tensor"; !strings.Contains(string(b), want) {
					t.Errorf("repro.py's output lacks %q:\n%s", want, b)
				}
				if _, err := os.Stat(marker); err == nil {
					os.Remove(marker)
					t.Errorf("the payload ran")
				}
			})
		})
	}
}

// TestReproNpy: a .npy tensor file is loaded with numpy (allow_pickle=False)
// and runs as a .pt file does.
func TestReproNpy(t *testing.T) {
	dir, _ := payloads(t)
	root, data := untrustedDump(t, "", "x.npy")
	copyInto(t, filepath.Join(dir, "good.npy"), filepath.Join(data, "x.npy"))
	runCases(t, []scriptRun{{name: "log of a .npy tensor", opt: Options{Path: root, Op: "Torch.log.0.forward", Step: 0, Rank: 0},
		entry: "Torch.log.0.forward", code: 1, output: []string{"REPRODUCED: output.0 holds nan, as recorded."}}})
}

// copyInto copies a file, making the folders above it.
func copyInto(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWeightsOnlyLoadsMsprobeTensors: torch.load(weights_only=True), the
// only way repro.py loads a .pt file, loads every tensor file the real
// msprobe saved in the shared fixtures, and the golden dump's.
func TestWeightsOnlyLoadsMsprobeTensors(t *testing.T) {
	needTorch(t)
	files := msprobeTensorFiles(t)
	const load = `import sys, torch
for p in sys.stdin.read().split("\n"):
    t = torch.load(p, map_location="cpu", weights_only=True)
    if not isinstance(t, torch.Tensor):
        sys.exit("%s holds a %s" % (p, type(t).__name__))
`
	cmd := exec.Command(python, "-c", load)
	cmd.Stdin = strings.NewReader(strings.Join(files, "\n"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("torch.load(weights_only=True): %v\n%s", err, out)
	}
}
