package parquetwrite

import (
	"cmp"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/internal/parquetwrite/jsread"
)

// oddStrings are values a CSV, JSON or C-string reader could mangle.
var oddStrings = []string{
	"", " ", "a,b", `say "hi"`, "line\nbreak", "cr\r\nlf", "tab\tsep", "nul\x00byte", `back\slash`,
	"=1+2", "-Infinity", "NaN", "null", "\u00e9\u4e2d\U0001F600", "\u200f\u202e rtl", "\ufeffbom",
}

// asCells is a row as jsread.SameCell takes it, in the order of testColumns.
func asCells(r row) []any {
	cells := []any{r.B, r.I, nil, nil, r.S, nil, nil, r.B2}
	if r.L != nil {
		cells[2] = *r.L
	}
	if r.D != nil {
		cells[3] = *r.D
	}
	if r.OS != nil {
		cells[5] = *r.OS
	}
	if r.Sh != nil {
		cells[6] = r.Sh
	}
	return cells
}

// readWithHyparquet writes the file and reads it with hyparquet.
func readWithHyparquet(t *testing.T, b []byte) *jsread.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.parquet")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return jsread.Read(t, path)
}

// hyparquet, a second independent reader (JavaScript), reads back every
// cell of every row the writer wrote: NaN, ±Inf and -0, nulls, empty and
// null lists, odd strings, dictionary and PLAIN pages, gzip and stored.
func TestHyparquetReadsBack(t *testing.T) {
	tests := []struct {
		name string
		rows int
		opt  Options
	}{
		{"no rows", 0, Options{}},
		{"one row group", 1000, Options{}},
		{"many pages and row groups", 3000, Options{RowGroupRows: 700, PageBytes: 512}},
		{"one row per group and page", 40, Options{RowGroupRows: 1, PageBytes: 1}},
		{"stored", 2000, Options{Stored: true, RowGroupRows: 1000, PageBytes: 4096}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			rows := randomRows(rng, tt.rows)
			specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)}
			for j := range rows {
				if j%3 == 0 {
					rows[j].S = oddStrings[rng.IntN(len(oddStrings))]
				}
				if j%5 == 1 {
					s := oddStrings[rng.IntN(len(oddStrings))]
					rows[j].OS = &s
				}
				if j < len(specials) {
					rows[j].D = &specials[j] // every special at least once
				}
			}
			f := readWithHyparquet(t, writeRows(t, rows, tt.opt))
			want := make([][]any, len(rows))
			for j, r := range rows {
				want[j] = asCells(r)
			}
			jsread.CheckRows(t, tt.name, f, want)
			if f.Metadata["k"] != "v" {
				t.Errorf("metadata %v, want k=v", f.Metadata)
			}
			perGroup := cmp.Or(tt.opt.RowGroupRows, 64<<10)
			wantGroups := (tt.rows + perGroup - 1) / perGroup
			if f.RowGroups != wantGroups {
				t.Errorf("%d row groups, want %d", f.RowGroups, wantGroups)
			}
		})
	}
}

// A dictionary that outgrows its bound, then PLAIN pages in the same
// column chunk, reads back in hyparquet too.
func TestHyparquetDictionaryFallback(t *testing.T) {
	var rows []row
	for i := range 6000 {
		r := row{S: oddStrings[i%len(oddStrings)] + string(rune('a'+i%26)) + string(make([]byte, 400))}
		if i%len(oddStrings) == 0 {
			r.S = string(rune(0x100+i)) + string(make([]byte, 400)) // 1.6 MB of distinct values
		}
		rows = append(rows, r)
	}
	f := readWithHyparquet(t, writeRows(t, rows, Options{RowGroupRows: 2500}))
	want := make([][]any, len(rows))
	for j, r := range rows {
		want[j] = asCells(r)
	}
	jsread.CheckRows(t, "dictionary fallback", f, want)
}

// The schema hyparquet reads: the physical and logical types, the
// repetition of each column, the LIST's three levels, and gzip.
func TestHyparquetSchema(t *testing.T) {
	f := readWithHyparquet(t, writeRows(t, randomRows(rand.New(rand.NewPCG(1, 1)), 10), Options{}))
	want := []jsread.SchemaElement{
		{Name: "schema", Children: 8},
		{Name: "b", Type: "BOOLEAN", Repetition: "REQUIRED"},
		{Name: "i", Type: "INT32", Repetition: "REQUIRED"},
		{Name: "l", Type: "INT64", Repetition: "OPTIONAL"},
		{Name: "d", Type: "DOUBLE", Repetition: "OPTIONAL"},
		{Name: "s", Type: "BYTE_ARRAY", Repetition: "REQUIRED", Converted: "UTF8", Logical: "STRING"},
		{Name: "os", Type: "BYTE_ARRAY", Repetition: "OPTIONAL", Converted: "UTF8", Logical: "STRING"},
		{Name: "sh", Repetition: "OPTIONAL", Converted: "LIST", Logical: "LIST", Children: 1},
		{Name: "list", Repetition: "REPEATED", Children: 1},
		{Name: "element", Type: "INT64", Repetition: "REQUIRED"},
		{Name: "b2", Type: "BOOLEAN", Repetition: "REQUIRED"},
	}
	if len(f.Schema) != len(want) {
		t.Fatalf("schema %+v", f.Schema)
	}
	for i := range want {
		if f.Schema[i] != want[i] {
			t.Errorf("schema element %d: %+v, want %+v", i, f.Schema[i], want[i])
		}
	}
	if len(f.Codecs) != 1 || f.Codecs[0] != "GZIP" {
		t.Errorf("codecs %v, want GZIP", f.Codecs)
	}
}
