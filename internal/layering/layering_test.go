package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/nanhunt/nanhunt/"

// root is the package at the module's root, as the walk names it; its
// doc.go and the others name it "nanhunt (the module root)".
const root = "."

// rootName is how a doc.go names the package at the module's root.
const rootName = "nanhunt (the module root)"

// marker starts the sentence of a package's doc comment that lists what
// it may import.
const marker = "May import: "

// TestImports holds every package to the imports its doc.go allows: the
// package comment ends with "May import: a, b, c." (the module's packages,
// by path; "the standard library only." when none), and no non-test file
// of the package imports another of the module's packages.
func TestImports(t *testing.T) {
	moduleRoot, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(moduleRoot, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s", moduleRoot)
	}
	pkgs, err := packages(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	for pkg, files := range pkgs {
		want, err := allowedOf(filepath.Join(moduleRoot, filepath.FromSlash(pkg), "doc.go"))
		if err != nil {
			t.Errorf("package %s: %v", pkg, err)
			continue
		}
		for _, dep := range want {
			if _, ok := pkgs[dep]; !ok {
				t.Errorf("%s/doc.go allows %s, which is no package of the module", pkg, dep)
			}
		}
		for _, file := range files {
			checkFile(t, moduleRoot, file, pkg, want)
		}
	}
}

// packages maps each package of the module (by its path from the module's
// root, "." for the root) to its non-test Go files.
func packages(moduleRoot string) (map[string][]string, error) {
	out := map[string][]string{}
	err := filepath.WalkDir(moduleRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != moduleRoot && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(moduleRoot, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		out[pkg] = append(out[pkg], path)
		return nil
	})
	return out, err
}

// allowedOf reads the packages a doc.go says its package may import.
func allowedOf(doc string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), doc, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return nil, err
	}
	text := commentText(f.Doc)
	i := strings.LastIndex(text, marker)
	if i < 0 {
		return nil, &missingError{doc}
	}
	list := strings.TrimSpace(text[i+len(marker):])
	end := strings.Index(list, ".")
	for end >= 0 && end+1 < len(list) && list[end+1] != ' ' && list[end+1] != '\n' {
		next := strings.Index(list[end+1:], ".")
		if next < 0 {
			end = -1
			break
		}
		end += 1 + next
	}
	if end < 0 {
		return nil, &missingError{doc}
	}
	list = strings.Join(strings.Fields(list[:end]), " ")
	if list == "the standard library only" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(list, ", ") {
		if p == rootName {
			p = root
		}
		out = append(out, p)
	}
	return out, nil
}

func commentText(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return g.Text()
}

type missingError struct{ doc string }

func (e *missingError) Error() string {
	return e.doc + " has no \"" + marker + "…\" sentence ending its package comment"
}

// checkFile reports each import of the module's packages that want does
// not hold.
func checkFile(t *testing.T, moduleRoot, path, pkg string, want []string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		t.Error(err)
		return
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if dep, ok := nanhuntPackage(p); ok && !slices.Contains(want, dep) {
			rf, _ := filepath.Rel(moduleRoot, path)
			t.Errorf("%s imports %s; %s/doc.go allows only %v", rf, dep, pkg, want)
		}
	}
}

// nanhuntPackage is a package's path from the module's root ("." for the
// root), and false for another module's.
func nanhuntPackage(path string) (string, bool) {
	if path+"/" == module {
		return root, true
	}
	return strings.CutPrefix(path, module)
}
