package jsread

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Pinned is the hyparquet version the lock file holds.
const Pinned = "1.31.5"

// readerDir is the folder of read.mjs and package.json, from the module root.
const readerDir = "internal/parquetwrite/testdata/jsreader"

// installHint says how to get what the reader needs.
const installHint = "install Node and npm (Debian: apt-get install nodejs npm), then run " +
	"`npm ci --prefix " + readerDir + "` from the repository root (.ci/run does both)"

// File is a Parquet file as hyparquet read it.
type File struct {
	Path      string            `json:"path"`
	NumRows   int64             `json:"num_rows"` // in the footer
	ReadRows  int               `json:"read_rows"`
	RowGroups int               `json:"row_groups"`
	Metadata  map[string]string `json:"metadata"`
	Schema    []SchemaElement   `json:"schema"`
	Codecs    []string          `json:"codecs"`
	// Columns are the top-level column names in file order; each row holds
	// one cell per column. A cell is nil, a bool, a string, a json.Number,
	// one of the strings "NaN", "Infinity", "-Infinity" and "-0" in a
	// double column, or a []any of cells.
	Columns []string
	Rows    [][]any
}

// SchemaElement is one element of the footer's schema, as hyparquet names
// its types ("INT32", "BYTE_ARRAY", "OPTIONAL", "UTF8", "STRING", "LIST").
type SchemaElement struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Repetition string `json:"repetition"`
	Converted  string `json:"converted"`
	Logical    string `json:"logical"`
	Children   int    `json:"children"`
}

// Read reads the Parquet file at path with hyparquet. The test fails when
// Node or the pinned package is missing, or when hyparquet cannot read the
// file.
func Read(tb testing.TB, path string) *File {
	tb.Helper()
	return ReadAll(tb, path)[0]
}

// ReadAll reads Parquet files with one run of hyparquet, in the order of
// paths, failing the test as Read does.
func ReadAll(tb testing.TB, paths ...string) []*File {
	tb.Helper()
	dir, err := root()
	if err != nil {
		tb.Fatalf("the JavaScript Parquet reader: %v", err)
	}
	node, err := nodeBinary()
	if err != nil {
		tb.Fatalf("the JavaScript Parquet reader needs Node: %v; %s", err, installHint)
	}
	if err := checkInstalled(dir); err != nil {
		tb.Fatalf("the JavaScript Parquet reader: %v; %s", err, installHint)
	}
	cmd := exec.Command(node, append([]string{filepath.Join(dir, "read.mjs")}, paths...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("hyparquet cannot read %s: %v\n%s", paths, err, stderr.Bytes())
	}
	files, err := parse(out)
	if err == nil && len(files) != len(paths) {
		err = fmt.Errorf("%d files read, %d asked", len(files), len(paths))
	}
	if err != nil {
		tb.Fatalf("hyparquet's output for %s: %v", paths, err)
	}
	return files
}

// root is the reader's folder: readerDir below the module root, found by
// walking up from the working directory (a package folder under go test).
func root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, filepath.FromSlash(readerDir)), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// nodeBinary finds node on PATH, or Debian's /usr/bin/node.
func nodeBinary() (string, error) {
	if p, err := exec.LookPath("node"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/node"); err == nil {
		return "/usr/bin/node", nil
	}
	return "", errors.New("no node on PATH nor at /usr/bin/node")
}

// checkInstalled reports whether node_modules holds the pinned hyparquet.
func checkInstalled(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "hyparquet", "package.json"))
	if err != nil {
		return fmt.Errorf("hyparquet %s is not installed in %s: %w", Pinned, dir, err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return fmt.Errorf("hyparquet's package.json: %w", err)
	}
	if pkg.Version != Pinned {
		return fmt.Errorf("hyparquet %s is installed in %s, the lock file pins %s", pkg.Version, dir, Pinned)
	}
	return nil
}

// parse reads read.mjs's output: for each file, a header line, then one
// line per row read.
func parse(out []byte) ([]*File, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	var files []*File
	for sc.Scan() {
		f := &File{}
		if err := json.Unmarshal(sc.Bytes(), f); err != nil {
			return nil, fmt.Errorf("header of file %d: %w", len(files), err)
		}
		f.Columns = topLevel(f.Schema)
		for len(f.Rows) < f.ReadRows && sc.Scan() {
			d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			d.UseNumber()
			var row []any
			if err := d.Decode(&row); err != nil {
				return nil, fmt.Errorf("%s row %d: %w", f.Path, len(f.Rows), err)
			}
			if len(row) != len(f.Columns) {
				return nil, fmt.Errorf("%s row %d has %d cells, the schema %d columns", f.Path, len(f.Rows), len(row), len(f.Columns))
			}
			f.Rows = append(f.Rows, row)
		}
		if len(f.Rows) != f.ReadRows {
			return nil, fmt.Errorf("%s: %d rows of %d", f.Path, len(f.Rows), f.ReadRows)
		}
		files = append(files, f)
	}
	return files, sc.Err()
}

// topLevel names the root's children, skipping the elements nested in them.
func topLevel(schema []SchemaElement) []string {
	var names []string
	i := 1
	var skip func()
	skip = func() {
		e := schema[i]
		i++
		for range e.Children {
			if i < len(schema) {
				skip()
			}
		}
	}
	for i < len(schema) {
		names = append(names, schema[i].Name)
		skip()
	}
	return names
}
