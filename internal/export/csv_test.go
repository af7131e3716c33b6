package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

// Each value is spelled as csv.go documents: NaN, Infinity, -Infinity,
// the shortest decimal, an empty field for a null, shapes in brackets,
// and fields holding commas, quotes, line breaks or a leading space
// quoted with their quotes doubled.
func TestCSVSpelling(t *testing.T) {
	base := Row{Step: 5, Rank: 2, EntryIndex: 7, EntryName: "Torch.sqrt.0.backward", API: "Torch.sqrt", Direction: "backward",
		Field: "output", Slot: "0", Dtype: "torch.float32", Nonfinite: "finite"}
	tests := []struct {
		name string
		edit func(r *Row)
		want string
	}{
		{"all null", func(r *Row) {},
			"5,2,7,Torch.sqrt.0.backward,Torch.sqrt,backward,false,output,0,torch.float32,,,,,,,finite,false\n"},
		{"NaN, +Inf, -Inf, -0", func(r *Row) {
			r.Max, r.Min, r.Mean, r.Norm = f64(math.NaN()), f64(math.Inf(-1)), f64(math.Copysign(0, -1)), f64(math.Inf(1))
			r.Nonfinite = "nan,-inf"
		}, "5,2,7,Torch.sqrt.0.backward,Torch.sqrt,backward,false,output,0,torch.float32,,,NaN,-Infinity,-0,Infinity,\"nan,-inf\",false\n"},
		{"numbers in shortest form", func(r *Row) {
			r.Max, r.Min, r.Mean, r.Norm = f64(0.1), f64(-5e-324), f64(1e21), f64(3)
		}, "5,2,7,Torch.sqrt.0.backward,Torch.sqrt,backward,false,output,0,torch.float32,,,0.1,-5e-324,1e+21,3,finite,false\n"},
		{"shape and numel", func(r *Row) { r.Shape, r.Numel = []int64{4, 7, 1}, i64(28) },
			"5,2,7,Torch.sqrt.0.backward,Torch.sqrt,backward,false,output,0,torch.float32,\"[4,7,1]\",28,,,,,finite,false\n"},
		{"scalar", func(r *Row) { r.Shape, r.Numel = []int64{}, i64(1) },
			"5,2,7,Torch.sqrt.0.backward,Torch.sqrt,backward,false,output,0,torch.float32,[],1,,,,,finite,false\n"},
		{"booleans and an empty dtype", func(r *Row) { r.Module, r.RequiresGrad, r.Dtype = true, true, "" },
			"5,2,7,Torch.sqrt.0.backward,Torch.sqrt,backward,true,output,0,,,,,,,,finite,true\n"},
		{"comma, quotes, line breaks, leading space", func(r *Row) {
			r.EntryName, r.API, r.Slot, r.Dtype = `a,b "c"`, "line\nbreak", " lead", "cr\r\nlf"
		}, "5,2,7,\"a,b \"\"c\"\"\",\"line\nbreak\",backward,false,output,\" lead\",\"cr\r\nlf\",,,,,,,finite,false\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base
			tt.edit(&r)
			var buf bytes.Buffer
			e, err := newCSVEncoder(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.row(&r); err != nil || e.finish(nil) != nil {
				t.Fatal(err)
			}
			header := strings.Join(columnNames(), ",") + "\n"
			if got := buf.String(); got != header+tt.want {
				t.Errorf("wrote\n%q\nwant\n%q", strings.TrimPrefix(got, header), tt.want)
			}
			recs, err := csv.NewReader(&buf).ReadAll()
			if err != nil || len(recs) != 2 {
				t.Fatalf("encoding/csv reads %d records: %v", len(recs), err)
			}
			back, err := parseCSVRow(recs[1])
			if err != nil {
				t.Fatal(err)
			}
			if err := sameRow(back, goCSVRead(r)); err != nil {
				t.Error(err)
			}
		})
	}
}

// The CSV export of the real fixtures, a generated run and the odd dump
// reads back through encoding/csv to exactly the rows written: same
// columns, same values, NaN, ±Inf and -0, nulls and odd strings included.
func TestCSVRoundTrip(t *testing.T) {
	for _, tc := range exportCases {
		t.Run(tc.name, func(t *testing.T) {
			s := run(t, Options{Path: tc.path(t), Steps: tc.steps, Format: CSV})
			if s.Written == 0 || !s.Complete() || s.Format != CSV {
				t.Fatalf("wrote %d %s files, %d damaged", s.Written, s.Format, s.Damaged)
			}
			for _, fr := range s.Files {
				if !strings.HasSuffix(fr.Path, "/part-0.csv") {
					t.Fatalf("file %s", fr.Path)
				}
				rows := readCSV(t, filepath.Join(s.Out, fr.Path))
				want := writtenRows(t, fr.Source, fr.Step, fr.Rank)
				if len(rows) != len(want) || fr.Rows != int64(len(want)) {
					t.Fatalf("%s: read %d rows, summary %d, written %d", fr.Path, len(rows), fr.Rows, len(want))
				}
				for i := range want {
					if err := sameRow(rows[i], goCSVRead(want[i])); err != nil {
						t.Fatalf("%s row %d: %v", fr.Path, i, err)
					}
				}
			}
		})
	}
}

// The manifest of a CSV export names its format and layout.
func TestCSVManifest(t *testing.T) {
	s := run(t, Options{Path: writeOddDump(t), Format: CSV})
	b, err := os.ReadFile(filepath.Join(s.Out, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Format != "csv" || m.Compression != "none" || m.Layout != "step=N/rank=R/part-0.csv" ||
		len(m.Files) != 1 || m.Files[0].Path != "step=3/rank=1/part-0.csv" || m.Counts.Rows != s.Rows || s.Rows == 0 {
		t.Errorf("manifest %+v", m)
	}
	if _, err := ParseFormat("xlsx"); err == nil {
		t.Error("ParseFormat(xlsx): no error")
	}
}

// A truncated dump.json yields in CSV, too, the rows before the damage.
func TestCSVTruncatedDump(t *testing.T) {
	src := generate(t, "tie-log-negative")
	bad := filepath.Join(src, "step2", "rank1", "dump.json")
	truncate(t, bad, 0.5)
	wants, damage := readDump(t, bad)
	if damage == nil || len(wants) == 0 {
		t.Fatalf("truncation left %d tensors and damage %v", len(wants), damage)
	}
	s := run(t, Options{Path: src, Steps: map[int]bool{2: true}, Format: CSV})
	if s.Damaged != 1 || s.Written != len(s.Files) {
		t.Fatalf("damaged %d, written %d of %d", s.Damaged, s.Written, len(s.Files))
	}
	rows := readCSV(t, filepath.Join(s.Out, "step=2", "rank=1", "part-0.csv"))
	if len(rows) != len(wants) {
		t.Errorf("%d rows, the reader yields %d tensors before the damage", len(rows), len(wants))
	}
}

// readCSV reads a CSV file of the export with encoding/csv, checking its
// header.
func readCSV(t *testing.T, path string) []Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = len(Columns)
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], columnNames()) {
		t.Fatalf("%s: header %v", path, recs[:min(1, len(recs))])
	}
	rows := make([]Row, len(recs)-1)
	for i, rec := range recs[1:] {
		if rows[i], err = parseCSVRow(rec); err != nil {
			t.Fatalf("%s line %d: %v", path, i+2, err)
		}
	}
	return rows
}

// parseCSVRow reads a record as a reader of the documented spelling would.
func parseCSVRow(f []string) (Row, error) {
	var r Row
	var errs []error
	i32 := func(s string) int32 {
		n, err := strconv.ParseInt(s, 10, 32)
		errs = append(errs, err)
		return int32(n)
	}
	boolean := func(s string) bool {
		b, err := strconv.ParseBool(s)
		errs = append(errs, err)
		return b
	}
	double := func(s string) *float64 {
		if s == "" {
			return nil
		}
		v, err := strconv.ParseFloat(s, 64)
		errs = append(errs, err)
		return &v
	}
	r.Step, r.Rank, r.EntryIndex = i32(f[0]), i32(f[1]), i32(f[2])
	r.EntryName, r.API, r.Direction, r.Module = f[3], f[4], f[5], boolean(f[6])
	r.Field, r.Slot, r.Dtype = f[7], f[8], f[9]
	if f[10] != "" {
		r.Shape = []int64{}
		errs = append(errs, json.Unmarshal([]byte(f[10]), &r.Shape))
	}
	if f[11] != "" {
		n, err := strconv.ParseInt(f[11], 10, 64)
		errs = append(errs, err)
		r.Numel = &n
	}
	r.Max, r.Min, r.Mean, r.Norm = double(f[12]), double(f[13]), double(f[14]), double(f[15])
	r.Nonfinite, r.RequiresGrad = f[16], boolean(f[17])
	for _, err := range errs {
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// goCSVRead is a row as Go's encoding/csv reads it back: that reader
// drops a carriage return before a line feed even inside a quoted field
// (the file holds it, as TestCSVSpelling shows; Python's csv module keeps
// it).
func goCSVRead(r Row) Row {
	for _, s := range []*string{&r.EntryName, &r.API, &r.Direction, &r.Field, &r.Slot, &r.Dtype, &r.Nonfinite} {
		*s = strings.ReplaceAll(*s, "\r\n", "\n")
	}
	return r
}

// sameRow compares two rows, NaN equal to NaN and -0 told from 0.
func sameRow(got, want Row) error {
	for i, p := range [4][2]*float64{{got.Max, want.Max}, {got.Min, want.Min}, {got.Mean, want.Mean}, {got.Norm, want.Norm}} {
		g, w := p[0], p[1]
		if (g == nil) != (w == nil) || (g != nil && !(math.IsNaN(*g) && math.IsNaN(*w)) && math.Float64bits(*g) != math.Float64bits(*w)) {
			return fmt.Errorf("%s: read %v, wrote %v", Columns[12+i].Name, deref(g), deref(w))
		}
	}
	if (got.Numel == nil) != (want.Numel == nil) || (got.Numel != nil && *got.Numel != *want.Numel) {
		return fmt.Errorf("numel: read %v, wrote %v", deref(got.Numel), deref(want.Numel))
	}
	if (got.Shape == nil) != (want.Shape == nil) || !slices.Equal(got.Shape, want.Shape) {
		return fmt.Errorf("shape: read %v, wrote %v", got.Shape, want.Shape)
	}
	got.Max, got.Min, got.Mean, got.Norm, got.Numel, got.Shape = nil, nil, nil, nil, nil, nil
	want.Max, want.Min, want.Mean, want.Norm, want.Numel, want.Shape = nil, nil, nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("read %#v, wrote %#v", got, want)
	}
	return nil
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
