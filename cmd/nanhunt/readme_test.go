package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
