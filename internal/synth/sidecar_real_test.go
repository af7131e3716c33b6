package synth

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/nanhunt/nanhunt/internal/realruns"
)

// The generated TrainerMon output is laid out as the real TrainerMon's,
// which the mask-hidden-sqrt run of testdata/realruns holds (msprobe's
// monitor on torch 1.13 with ops min, max, norm, nans): per kind the same
// header, the same folder name pattern and the same file name pattern.
func TestMonitorSidecarLikeTheRealOne(t *testing.T) {
	real := filepath.Join(realruns.Dir(t, "mask-hidden-sqrt"), "monitor")
	var spec Spec
	for _, sc := range Scenarios() {
		if sc.Name == "log-negative" {
			spec = sc.Spec
		}
	}
	run := generateSidecars(t, spec, Sidecars{MonitorOps: []string{"min", "max", "norm", "nans"}})
	realHeaders, realFolders := monitorLayout(t, real)
	genHeaders, genFolders := monitorLayout(t, run.mon)
	if len(realHeaders) == 0 {
		t.Fatalf("no CSV in the real monitor output %s", real)
	}
	// the generator writes the kinds of a config with xy_distribution
	// (forward only), wg_distribution and param_distribution's updated
	// weights; the real run also records actv_grad and param_origin
	for kind, got := range genHeaders {
		want, ok := realHeaders[kind]
		if !ok {
			t.Errorf("the generator writes %s files, which the real TrainerMon output has none of", kind)
			continue
		}
		if got != want {
			t.Errorf("%s header:\n got %s\nwant %s (the real TrainerMon's)", kind, got, want)
		}
	}
	if len(genHeaders) < 4 {
		t.Errorf("the generator writes only %d kinds of monitor files", len(genHeaders))
	}
	folder := regexp.MustCompile(`^[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}-rank\d+-[0-9a-f]{8}$`)
	for _, fs := range [][]string{realFolders, genFolders} {
		for _, f := range fs {
			if !folder.MatchString(f) {
				t.Errorf("folder %q is not named <Mon><day>_<hh>-<mm>-<ss>-rank<r>-<8 hex>", f)
			}
		}
	}
}

var csvName = regexp.MustCompile(`^([a-z_]+)_(\d+)-(\d+)\.csv$`)

// monitorLayout reads the header of each kind's first CSV file, and the
// rank folders' names.
func monitorLayout(t *testing.T, dir string) (map[string]string, []string) {
	t.Helper()
	folders, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{}
	var names []string
	for _, fd := range folders {
		names = append(names, fd.Name())
		files, err := os.ReadDir(filepath.Join(dir, fd.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			m := csvName.FindStringSubmatch(f.Name())
			if m == nil {
				t.Errorf("%s/%s is not named <kind>_<from>-<to>.csv", fd.Name(), f.Name())
				continue
			}
			if _, seen := headers[m[1]]; seen {
				continue
			}
			headers[m[1]] = firstLine(t, filepath.Join(dir, fd.Name(), f.Name()))
		}
	}
	return headers, names
}

func firstLine(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	return sc.Text()
}
