package layering

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/nanhunt/nanhunt/"

// root is the package at the module's root, as the table names it (the
// directory the walk gives it).
const root = "."

// allowed lists, for each package, the nanhunt packages its non-test files
// may import.
var allowed = map[string][]string{
	"internal/nonfinite":    {},
	"internal/msprobe":      {},
	"internal/jsonlex":      {},
	"internal/jsonoracle":   {},
	"internal/fixturedir":   {},
	"internal/realruns":     {},
	"internal/layering":     {},
	"internal/safeio":       {},
	"internal/parquetwrite": {},
	"internal/robustness":   {},
	"internal/ctxtest":      {},
	"internal/linktest":     {},
	"internal/launchtest":   {},
	"internal/outguard":     {},
	"internal/tinylimits":   {},
	"internal/fsjson":       {},
	"internal/notation":     {},
	"dump":                  {"internal/jsonlex", "internal/nonfinite", "internal/notation"},
	"internal/policy":       {"dump", "internal/safeio", "internal/nonfinite"},
	"verdict":               {"internal/fsjson", "internal/msprobe", "internal/nonfinite"},
	"internal/ranklist":     {"internal/notation", "verdict"},
	"internal/trace":        {"dump", "internal/fsjson", "internal/ranklist", "internal/safeio", "internal/tinylimits", "internal/nonfinite", "internal/policy", "verdict"},
	"internal/plan":         {"dump", "internal/ranklist", "internal/safeio", "internal/msprobe", "verdict"},
	"internal/trainlog":     {"internal/jsonlex", "internal/safeio", "internal/nonfinite"},
	"internal/monitor":      {"internal/safeio", "internal/nonfinite"},
	"internal/evidence":     {"dump", "internal/ranklist", "internal/monitor", "internal/plan", "internal/trainlog", "verdict"},
	// the reports are functions of the verdict: neither the reader of the
	// dump nor the analysis
	"internal/report":     {"internal/notation", "internal/ranklist", "internal/safeio", "verdict"},
	"internal/htmlreport": {"internal/nonfinite", "internal/notation", "internal/report", "verdict"},
	"internal/export":     {"dump", "internal/outguard", "internal/parquetwrite", "internal/safeio", "internal/policy"},
	"internal/repro":      {"dump", "internal/jsonlex", "internal/outguard", "internal/safeio", "internal/trace", "verdict"},
	"internal/reference":  {"internal/jsonoracle", "verdict"},
	"internal/cases":      {"internal/jsonoracle"},

	// the generator: the spec below the msprobe writer and the truth,
	// which share nothing, the simulation above them, the entry point on top
	"internal/synth/spec":         {},
	"internal/synth/msprobewrite": {"internal/synth/spec"},
	"internal/synth/truth":        {"internal/synth/spec"},
	"internal/synth/sim":          {"internal/synth/spec", "internal/synth/msprobewrite", "internal/synth/truth"},
	"internal/synth":              {"internal/synth/spec", "internal/synth/msprobewrite", "internal/synth/truth", "internal/synth/sim"},

	"cmd/nanhunt": {"dump", "internal/export", "internal/fsjson", "internal/htmlreport", "internal/jsonlex", "internal/outguard", "internal/ranklist", "internal/report", "internal/safeio",
		"internal/plan", "internal/policy", "internal/repro", "internal/sources", "internal/synth", "internal/trace", "verdict", "internal/watch", root},
	"internal/sources": {"internal/evidence", "internal/monitor", "internal/plan", "internal/trainlog", "verdict"},
	"internal/watch":   {"dump", "internal/outguard", "internal/plan", "internal/ranklist", "internal/safeio", "internal/sources", "internal/trace", "verdict"},
	root:               {"internal/evidence", "internal/plan", "internal/policy", "internal/sources", "internal/trace", "verdict"},

	// the tests' second Parquet reader (hyparquet, run under Node)
	"internal/parquetwrite/jsread": {},
}

// nanhuntPackage is the table's name of an import path of the module
// ("" and false for another module's).
func nanhuntPackage(path string) (string, bool) {
	if path+"/" == module {
		return root, true
	}
	return strings.CutPrefix(path, module)
}

func TestImports(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s", root)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		seen[pkg] = true
		want, ok := allowed[pkg]
		if !ok {
			t.Errorf("package %s is not in the layering table", pkg)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if dep, ok := nanhuntPackage(p); ok && !slices.Contains(want, dep) {
				rf, _ := filepath.Rel(root, path)
				t.Errorf("%s imports %s; %s may import only %v", rf, dep, pkg, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var gone []string
	for pkg := range allowed {
		if !seen[pkg] {
			gone = append(gone, pkg)
		}
	}
	sort.Strings(gone)
	if len(gone) > 0 {
		t.Errorf("the layering table lists packages that do not exist: %v", gone)
	}
}
