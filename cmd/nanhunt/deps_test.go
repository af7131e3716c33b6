package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// buildModules are the only modules the nanhunt command may compile: small
// ones, so that a first "go run ./cmd/nanhunt demo" builds in seconds. The
// Parquet export is written with the standard library; parquet-go, which
// pulls compressors and geometry libraries, is only the tests' reader.
var buildModules = []string{
	"github.com/nanhunt/nanhunt",
	"github.com/go-json-experiment/json",
	"github.com/spf13/cobra",
	"github.com/spf13/pflag",
	"golang.org/x/sync",
	"golang.org/x/sys",
	"golang.org/x/term",
}

func TestBuildModules(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil && runtime.GOROOT() != "" { // GOROOT is empty in a -trimpath build
		goTool, err = filepath.Join(runtime.GOROOT(), "bin", "go"), nil
	}
	if err != nil {
		t.Fatalf("the go command is needed to list what nanhunt compiles: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	seen := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		if !seen[m] && !slices.Contains(buildModules, m) {
			t.Errorf("the nanhunt command compiles module %s; keep it out of the build (or add it to buildModules knowing what it costs a cold build)", m)
		}
		seen[m] = true
	}
	if !seen["github.com/nanhunt/nanhunt"] {
		t.Errorf("go list named no nanhunt package: %q", out)
	}
}
