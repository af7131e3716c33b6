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
	"internal/intranges":    {},
	"internal/dumpname":     {},
	"internal/dumplayout":   {"internal/intranges"},
	"internal/sidefile":     {"internal/jsonlex", "internal/dumpname"},
	"internal/bytesearch":   {"internal/jsonlex", "internal/nonfinite"},
	"dump":                  {"internal/jsonlex", "internal/nonfinite", "internal/dumplayout", "internal/dumpname", "internal/sidefile"},
	"internal/entryat":      {"dump"},
	"internal/callsize":     {"dump", "internal/bytesearch", "internal/entryat"},
	"internal/policy":       {"dump", "internal/bytesearch", "internal/safeio", "internal/nonfinite"},
	"verdict":               {"internal/fsjson", "internal/msprobe", "internal/nonfinite"},
	"internal/ranklist":     {"dump", "internal/intranges", "verdict"},
	"internal/trace": {"dump", "internal/bytesearch", "internal/callsize", "internal/dumplayout", "internal/entryat", "internal/fsjson", "internal/intranges", "internal/ranklist",
		"internal/safeio", "internal/sidefile", "internal/tinylimits", "internal/nonfinite", "internal/policy", "verdict"},
	"internal/plan":       {"dump", "internal/callsize", "internal/intranges", "internal/ranklist", "internal/safeio", "internal/msprobe", "verdict"},
	"internal/trainlog":   {"internal/jsonlex", "internal/safeio", "internal/nonfinite"},
	"internal/monitor":    {"internal/safeio", "internal/nonfinite"},
	"internal/evidence":   {"dump", "internal/intranges", "internal/ranklist", "internal/monitor", "internal/plan", "internal/trainlog", "verdict"},
	"internal/report":     {"dump", "internal/intranges", "internal/ranklist", "internal/safeio", "verdict"},
	"internal/htmlreport": {"dump", "internal/entryat", "internal/intranges", "internal/nonfinite", "internal/report", "internal/safeio", "internal/policy", "internal/trace", "verdict"},
	"internal/export":     {"dump", "internal/outguard", "internal/parquetwrite", "internal/safeio", "internal/policy"},
	"internal/repro":      {"dump", "internal/intranges", "internal/jsonlex", "internal/nonfinite", "internal/outguard", "internal/safeio", "internal/trace", "verdict"},
	"internal/synth":      {},
	"internal/reference":  {"internal/jsonoracle", "verdict"},
	"cmd/nanhunt": {"dump", "internal/evidence", "internal/export", "internal/fsjson", "internal/htmlreport", "internal/intranges", "internal/jsonlex", "internal/outguard", "internal/ranklist", "internal/report", "internal/safeio", "internal/monitor",
		"internal/plan", "internal/policy", "internal/repro", "internal/synth", "internal/trace", "internal/trainlog", "verdict", "internal/watch"},
	"internal/watch": {"dump", "internal/dumplayout", "internal/outguard", "internal/ranklist", "internal/safeio", "internal/trace", "verdict"},
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
			if dep, ok := strings.CutPrefix(p, module); ok && !slices.Contains(want, dep) {
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
