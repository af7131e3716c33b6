package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's examples are the outputs the golden tests hold: a block
// marked <!-- golden FILE --> is the file's text (after a "$ command" first
// line, when it shows one), rewritten with -update; a block marked
// <!-- subset FILE --> is JSON that the golden JSON contains (objects by
// key, lists of objects in order, scalars and lists of scalars exactly).
func TestREADMEExamples(t *testing.T) {
	root := filepath.Join("..", "..")
	readme := filepath.Join(root, "README.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	marker := regexp.MustCompile("<!-- (golden|subset) ([^ ]+) -->\n```[a-z]*\n")
	out := []byte{}
	rest := data
	n := 0
	for {
		m := marker.FindSubmatchIndex(rest)
		if m == nil {
			out = append(out, rest...)
			break
		}
		n++
		kind, file := string(rest[m[2]:m[3]]), string(rest[m[4]:m[5]])
		body := rest[m[1]:]
		end := bytes.Index(body, []byte("```\n"))
		if end < 0 {
			t.Fatalf("README: the block of %s does not end", file)
		}
		block := body[:end]
		out = append(out, rest[:m[1]]...)
		want, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		switch kind {
		case "golden":
			head := []byte{}
			if bytes.HasPrefix(block, []byte("$ ")) {
				i := bytes.IndexByte(block, '\n') + 1
				head, block = block[:i], block[i:]
			}
			if !bytes.Equal(block, want) {
				if *update {
					block = want
				} else {
					t.Errorf("README's example of %s differs from it (run go test ./cmd/nanhunt -update after checking it):\n%s", file, block)
				}
			}
			out = append(append(out, head...), block...)
		case "subset":
			var sub, full any
			if err := json.Unmarshal(block, &sub); err != nil {
				t.Errorf("README's example of %s is not JSON: %v", file, err)
			} else if err := json.Unmarshal(want, &full); err != nil {
				t.Fatal(err)
			} else if err := subset(sub, full, ""); err != nil {
				t.Errorf("README's JSON example is not what %s holds: %v", file, err)
			}
			out = append(out, block...)
		}
		rest = body[end:]
	}
	if n < 3 {
		t.Errorf("README has %d marked examples, want at least 3", n)
	}
	if *update && !bytes.Equal(out, data) {
		if err := os.WriteFile(readme, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// subset reports where sub is not contained in full.
func subset(sub, full any, path string) error {
	switch s := sub.(type) {
	case map[string]any:
		f, ok := full.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: an object where the verdict has %T", path, full)
		}
		for k, v := range s {
			fv, ok := f[k]
			if !ok {
				return fmt.Errorf("%s.%s: no such field", path, k)
			}
			if err := subset(v, fv, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		f, ok := full.([]any)
		if !ok {
			return fmt.Errorf("%s: a list where the verdict has %T", path, full)
		}
		objects := len(s) > 0
		for _, x := range s {
			if _, ok := x.(map[string]any); !ok {
				objects = false
			}
		}
		if !objects {
			a, _ := json.Marshal(s)
			b, _ := json.Marshal(f)
			if !bytes.Equal(a, b) {
				return fmt.Errorf("%s: %s, the verdict %s", path, a, b)
			}
			return nil
		}
		j := 0
		for i, x := range s {
			for j < len(f) && subset(x, f[j], "") != nil {
				j++
			}
			if j == len(f) {
				return fmt.Errorf("%s[%d]: not in the verdict's list (in order): %v", path, i, subset(x, f[min(i, len(f)-1)], fmt.Sprintf("%s[%d]", path, i)))
			}
			j++
		}
		return nil
	}
	a, _ := json.Marshal(sub)
	b, _ := json.Marshal(full)
	if !bytes.Equal(a, b) {
		return fmt.Errorf("%s: %s, the verdict %s", path, a, b)
	}
	return nil
}

// TestREADMEPackageMap: the README's map of the packages ("Code") names
// every package of the module, by its path, by its folder's name and a
// slash ("ctxtest/", in a line of helpers), or, for a package below
// another, by its name in its parent's entry ("sim" in internal/synth/'s).
func TestREADMEPackageMap(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(string(data), "\n## Code\n")
	_, block, ok2 := strings.Cut(code, "\n```\n")
	block, _, ok3 := strings.Cut(block, "\n```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README has no Code section with a block that maps the packages")
	}
	pkgs := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name := d.Name(); d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "python") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			pkgs[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 40 {
		t.Fatalf("found %d packages under %s, want the module's", len(pkgs), root)
	}
	for pkg := range pkgs {
		if !inPackageMap(block, pkg) {
			t.Errorf("README's package map (\"Code\") does not name %s", pkg)
		}
	}
}

// inPackageMap reports whether the map names pkg (see TestREADMEPackageMap).
func inPackageMap(block, pkg string) bool {
	if pkg == "." {
		return strings.Contains(block, "nanhunt.go ")
	}
	parent, base := filepath.Split(pkg)
	word := regexp.MustCompile(`(^|[^\w/])` + regexp.QuoteMeta(base) + `\b`)
	if regexp.MustCompile(`(^|[^\w/])`+regexp.QuoteMeta(pkg)+`\b`).MatchString(block) || regexp.MustCompile(`(^|[^\w/])`+regexp.QuoteMeta(base)+"/").MatchString(block) {
		return true
	}
	entry := ""
	for _, line := range strings.Split(block, "\n") {
		switch {
		case parent != "" && strings.HasPrefix(line, parent):
			entry = line
		case entry != "" && strings.HasPrefix(line, " "):
			entry += "\n" + line
		default:
			if word.MatchString(entry) {
				return true
			}
			entry = ""
		}
	}
	return word.MatchString(entry)
}
