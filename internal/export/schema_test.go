package export

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/nanhunt/nanhunt/dump"
	class "github.com/nanhunt/nanhunt/internal/nonfinite"
)

// Columns documents Row exactly: same names, order, types and
// nullability.
func TestColumnsMatchRow(t *testing.T) {
	checkFields(t, parquet.SchemaOf(Row{}).Fields())
}

// The files written have exactly the columns of Columns, as an independent
// Parquet reader sees them.
func TestColumnsMatchFile(t *testing.T) {
	s := run(t, Options{Path: generate(t, "tie-log-negative")})
	parts, _ := filepath.Glob(filepath.Join(s.Out, "step=*", "rank=*", Parquet.partName()))
	if len(parts) == 0 {
		t.Fatal("no Parquet file written")
	}
	pf := openParquet(t, parts[0])
	checkFields(t, pf.Schema().Fields())
}

func checkFields(t *testing.T, fields []parquet.Field) {
	t.Helper()
	if len(fields) != len(Columns) {
		t.Fatalf("Row has %d columns, Columns lists %d", len(fields), len(Columns))
	}
	for i, f := range fields {
		c := Columns[i]
		if f.Name() != c.Name || f.Optional() != c.Nullable {
			t.Errorf("column %d: Row has %s (optional %v), Columns %s (nullable %v)", i, f.Name(), f.Optional(), c.Name, c.Nullable)
		}
		if got := duckType(f); got != c.Type {
			t.Errorf("column %s: Row's type reads as %s, Columns says %s", c.Name, got, c.Type)
		}
	}
}

// duckType is the DuckDB type of a Parquet column.
func duckType(f parquet.Field) string {
	var logical string
	if lt := f.Type().LogicalType(); lt != nil {
		logical = lt.String()
	}
	switch logical {
	case "LIST":
		return duckType(f.Fields()[0].Fields()[0]) + "[]"
	case "STRING":
		return "VARCHAR"
	}
	switch f.Type().Kind() {
	case parquet.Int32:
		return "INTEGER"
	case parquet.Int64:
		return "BIGINT"
	case parquet.Double:
		return "DOUBLE"
	case parquet.Boolean:
		return "BOOLEAN"
	}
	return f.Type().String()
}

func TestNumel(t *testing.T) {
	tests := []struct {
		shape []int
		want  int64
		ok    bool
	}{
		{nil, 1, true},
		{[]int{4, 8, 32}, 1024, true},
		{[]int{4, 0, 32}, 0, true},
		{[]int{-1, 8}, 0, false},
		{[]int{1 << 31, 1 << 31, 1 << 31}, 0, false},
	}
	for _, tt := range tests {
		got, ok := numel(tt.shape)
		if got != tt.want || ok != tt.ok {
			t.Errorf("numel(%v) = %d, %v; want %d, %v", tt.shape, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRowOfTensor(t *testing.T) {
	num := func(v float64) dump.Stat {
		st := dump.Stat{Kind: dump.StatNumber, Value: v}
		switch {
		case math.IsNaN(v):
			st.Class = class.NaN
		case math.IsInf(v, 1):
			st.Class = class.PosInf
		case math.IsInf(v, -1):
			st.Class = class.NegInf
		}
		return st
	}
	tests := []struct {
		name      string
		t         dump.Tensor
		nonfinite string
		shape     []int64 // nil: null
		numel     int64   // -1: null
		nulls     [4]bool // max, min, mean, norm
	}{
		{"finite", dump.Tensor{Dtype: "torch.float32", Shape: []int{2, 3}, Max: num(1), Min: num(-1), Mean: num(0), Norm: num(2)},
			"finite", []int64{2, 3}, 6, [4]bool{}},
		{"nan and -inf", dump.Tensor{Dtype: "torch.float16", Shape: []int{4}, Max: num(math.NaN()), Min: num(math.Inf(-1)), Mean: num(math.NaN()), Norm: num(math.NaN())},
			"nan,-inf", []int64{4}, 4, [4]bool{}},
		{"int tensor, null mean and norm", dump.Tensor{Dtype: "torch.int64", Shape: []int{4}, Max: num(3), Min: num(1), Mean: dump.Stat{Kind: dump.StatNull}},
			"finite", []int64{4}, 4, [4]bool{false, false, true, true}},
		{"bool tensor", dump.Tensor{Dtype: "torch.bool", Shape: []int{}, Max: dump.Stat{Kind: dump.StatBool, Value: 1}, Min: dump.Stat{Kind: dump.StatBool}},
			"finite", []int64{}, 1, [4]bool{false, false, true, true}},
		{"no statistics", dump.Tensor{Dtype: "torch.float32", Shape: []int{8}, Max: dump.Stat{Kind: dump.StatNull}, Min: dump.Stat{Kind: dump.StatNull}},
			"unknown", []int64{8}, 8, [4]bool{true, true, true, true}},
		{"no shape, no dtype", dump.Tensor{Max: num(1), Min: num(0)},
			"finite", nil, -1, [4]bool{false, false, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBatch()
			ei := entryOf(3, 1, &dump.Entry{Index: 7, Name: "Tensor.__mul__.1.backward"})
			b.add(&ei, &tt.t)
			r := b.rows[0]
			if r.Step != 3 || r.Rank != 1 || r.EntryIndex != 7 || r.API != "Tensor.__mul__" || r.Direction != "backward" {
				t.Errorf("entry columns: %+v", r)
			}
			if r.Nonfinite != tt.nonfinite {
				t.Errorf("nonfinite %q, want %q", r.Nonfinite, tt.nonfinite)
			}
			if (r.Shape == nil) != (tt.shape == nil) || len(r.Shape) != len(tt.shape) {
				t.Errorf("shape %#v, want %#v", r.Shape, tt.shape)
			}
			if (r.Numel == nil) != (tt.numel < 0) || (r.Numel != nil && *r.Numel != tt.numel) {
				t.Errorf("numel %v, want %d", r.Numel, tt.numel)
			}
			for i, p := range []*float64{r.Max, r.Min, r.Mean, r.Norm} {
				if (p == nil) != tt.nulls[i] {
					t.Errorf("statistic %d: %v, want null %v", i, p, tt.nulls[i])
				}
			}
		})
	}
}

// A full batch keeps every row's values apart.
func TestBatchArenas(t *testing.T) {
	b := newBatch()
	ei := entryOf(0, 0, &dump.Entry{Name: "Torch.add.0.forward"})
	for i := range batchRows {
		v := float64(i)
		tn := dump.Tensor{Dtype: "torch.float32", Shape: []int{i, 2}, Max: dump.Stat{Kind: dump.StatNumber, Value: v},
			Min: dump.Stat{Kind: dump.StatNumber, Value: -v}, Mean: dump.Stat{Kind: dump.StatNumber, Value: v / 2},
			Norm: dump.Stat{Kind: dump.StatNumber, Value: v * 2}}
		b.add(&ei, &tn)
	}
	if !b.full() {
		t.Fatal("batch not full")
	}
	for i, r := range b.rows {
		v := float64(i)
		if *r.Max != v || *r.Min != -v || *r.Mean != v/2 || *r.Norm != v*2 || r.Shape[0] != int64(i) || *r.Numel != int64(2*i) {
			t.Fatalf("row %d: %v %v %v %v %v %v", i, *r.Max, *r.Min, *r.Mean, *r.Norm, r.Shape, *r.Numel)
		}
	}
}
