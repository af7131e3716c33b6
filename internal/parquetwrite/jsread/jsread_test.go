package jsread

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The comparison tells every difference a reader could make.
func TestSameCell(t *testing.T) {
	tests := []struct {
		name      string
		got, want any
		same      bool
	}{
		{"null", nil, nil, true},
		{"null read as empty string", "", nil, false},
		{"bool", true, true, true},
		{"bool flipped", false, true, false},
		{"int32", json.Number("-7"), int32(-7), true},
		{"int64 past 2^53", json.Number("9007199254740993"), int64(9007199254740993), true},
		{"int64 rounded", json.Number("9007199254740992"), int64(9007199254740993), false},
		{"int read as string", "5", int64(5), false},
		{"double", json.Number("0.1"), 0.1, true},
		{"double off by one ulp", json.Number("0.10000000000000002"), 0.1, false},
		{"NaN", "NaN", math.NaN(), true},
		{"+Inf", "Infinity", math.Inf(1), true},
		{"-Inf", "-Infinity", math.Inf(-1), true},
		{"-Inf read as +Inf", "Infinity", math.Inf(-1), false},
		{"-0", "-0", math.Copysign(0, -1), true},
		{"-0 read as 0", json.Number("0"), math.Copysign(0, -1), false},
		{"NaN read as null", nil, math.NaN(), false},
		{"string", "a,\"b\"\n", "a,\"b\"\n", true},
		{"string changed", "a", "b", false},
		{"empty list", []any{}, []int64{}, true},
		{"null list", nil, []int64{}, false},
		{"list", []any{json.Number("4"), json.Number("7")}, []int64{4, 7}, true},
		{"list element", []any{json.Number("4"), json.Number("8")}, []int64{4, 7}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := SameCell(tt.got, tt.want); (err == nil) != tt.same {
				t.Errorf("SameCell(%#v, %#v) = %v, want same %v", tt.got, tt.want, err, tt.same)
			}
		})
	}
}

// The output of read.mjs parses into columns and rows, nested elements
// skipped.
func TestParse(t *testing.T) {
	out := `{"path":"p","num_rows":2,"read_rows":2,"row_groups":1,"metadata":{"k":"v"},"codecs":["GZIP"],"schema":[` +
		`{"name":"schema","children":3},{"name":"a","type":"INT32"},` +
		`{"name":"sh","children":1},{"name":"list","children":1},{"name":"element","type":"INT64"},` +
		`{"name":"s","type":"BYTE_ARRAY"}]}
[1,[2,3],"x"]
[2,null,"NaN"]
`
	files, err := parse([]byte(out + out))
	if err != nil || len(files) != 2 {
		t.Fatal(files, err)
	}
	f := files[1]
	if !slices.Equal(f.Columns, []string{"a", "sh", "s"}) || len(f.Rows) != 2 || f.Metadata["k"] != "v" {
		t.Fatalf("columns %v rows %v metadata %v", f.Columns, f.Rows, f.Metadata)
	}
	CheckRows(t, "parsed", f, [][]any{{int32(1), []int64{2, 3}, "x"}, {int32(2), nil, "NaN"}})
	if _, err := parse([]byte(strings.Replace(out, `"x"]`, `"x",4]`, 1))); err == nil {
		t.Error("a row with more cells than columns: no error")
	}
	if _, err := parse([]byte(strings.Replace(out, `"read_rows":2`, `"read_rows":3`, 1))); err == nil {
		t.Error("fewer rows than the header says: no error")
	}
}

// package.json and its lock file pin the version the tests check for.
func TestPinnedVersion(t *testing.T) {
	dir, err := root()
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	var lock struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	for name, v := range map[string]any{"package.json": &pkg, "package-lock.json": &lock} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if got := pkg.Dependencies["hyparquet"]; got != Pinned {
		t.Errorf("package.json asks for hyparquet %q, want exactly %s", got, Pinned)
	}
	if got := lock.Packages["node_modules/hyparquet"]; got.Version != Pinned || got.Integrity == "" {
		t.Errorf("package-lock.json holds hyparquet %+v, want %s with its integrity", got, Pinned)
	}
}
