package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDumpSurface holds package dump, the public reader, to what a reader
// of a dump needs: at most 30 exported names at the package level (every
// type, function, variable and constant counted on its own), none of them
// the byte search's or the rule set's.
func TestDumpSurface(t *testing.T) {
	names := exportedNames(t, filepath.Join("..", "..", "dump"))
	if len(names) > 30 {
		t.Errorf("dump exports %d names, want at most 30: %s", len(names), strings.Join(names, " "))
	}
	for _, internal := range []string{"Prefilter", "Hits", "LastEntry", "Policy", "Rules"} {
		if slices.Contains(names, internal) {
			t.Errorf("dump exports %s", internal)
		}
	}
}

// exportedNames are the exported package-level names of the non-test
// files in dir, sorted.
func exportedNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			names = append(names, declNames(d)...)
		}
	}
	slices.Sort(names)
	return names
}

// declNames are the exported names a top-level declaration declares
// (methods are not the package's names).
func declNames(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil && d.Name.IsExported() {
			out = append(out, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					out = append(out, s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}
