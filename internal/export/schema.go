package export

import (
	"math"

	"github.com/nanhunt/nanhunt/internal/policy"

	"github.com/nanhunt/nanhunt/dump"
)

// Row is one tensor record of dump.json: the Go type of a row of the
// exported files (Parquet: usable with parquet.NewGenericReader[Row]).
type Row struct {
	Step         int32    `parquet:"step"`
	Rank         int32    `parquet:"rank"`
	EntryIndex   int32    `parquet:"entry_index,delta"`
	EntryName    string   `parquet:"entry_name"`
	API          string   `parquet:"api,dict"`
	Direction    string   `parquet:"direction,dict"`
	Module       bool     `parquet:"module"`
	Field        string   `parquet:"field,dict"`
	Slot         string   `parquet:"slot,dict"`
	Dtype        string   `parquet:"dtype,dict"`
	Shape        []int64  `parquet:"shape,list,optional"`
	Numel        *int64   `parquet:"numel,optional"`
	Max          *float64 `parquet:"max,optional"`
	Min          *float64 `parquet:"min,optional"`
	Mean         *float64 `parquet:"mean,optional"`
	Norm         *float64 `parquet:"norm,optional"`
	Nonfinite    string   `parquet:"nonfinite,dict"`
	RequiresGrad bool     `parquet:"requires_grad"`
}

// Column describes one column of the exported files.
type Column struct {
	Name     string `json:"name"`
	Type     string `json:"type"` // the type DuckDB reads it as
	Nullable bool   `json:"nullable"`
	Doc      string `json:"doc"`
}

// Columns lists the columns of Row in file order.
var Columns = []Column{
	{"step", "INTEGER", false, "training step (the stepN folder)"},
	{"rank", "INTEGER", false, "rank (the rankN folder; 0 for rank/ and procPID/ folders)"},
	{"entry_index", "INTEGER", false, "position of the entry in dump.json, from 0: execution order"},
	{"entry_name", "VARCHAR", false, "exact entry name, e.g. Torch.sqrt.0.backward"},
	{"api", "VARCHAR", false, "entry name without counter and direction, e.g. Torch.sqrt"},
	{"direction", "VARCHAR", false, "forward, backward, parameters_grad or unknown"},
	{"module", "BOOLEAN", false, "a Module/Cell entry rather than an API call"},
	{"field", "VARCHAR", false, "input_args, input_kwargs, input, output, parameters, parameters_grad or other"},
	{"slot", "VARCHAR", false, "path of the tensor below the field, e.g. 0, 0.1, weight"},
	{"dtype", "VARCHAR", false, "dtype as msprobe wrote it, e.g. torch.float32; empty when absent"},
	{"shape", "BIGINT[]", true, "dimensions; [] for a scalar; null when unknown"},
	{"numel", "BIGINT", true, "product of the shape; null when unknown"},
	{"max", "DOUBLE", true, "Max statistic; NaN and ±Inf as IEEE values; null when null or absent"},
	{"min", "DOUBLE", true, "Min statistic"},
	{"mean", "DOUBLE", true, "Mean statistic (computed by msprobe in the tensor's dtype)"},
	{"norm", "DOUBLE", true, "Norm statistic (computed by msprobe in the tensor's dtype)"},
	{"nonfinite", "VARCHAR", false, "what Max/Min say the tensor holds: finite, nan, +inf, -inf, nan,-inf, ...; unknown without Max/Min"},
	{"requires_grad", "BOOLEAN", false, "the tensor's requires_grad"},
}

// classNames caches dump.Class.String for the eight classes.
var classNames = func() [8]string {
	var s [8]string
	for c := range s {
		s[c] = dump.Class(c).String()
	}
	return s
}()

// nonfinite names what a tensor holds, as the rule set reads it (Max and
// Min only).
func nonfinite(t *dump.Tensor) string {
	if !policy.Decided(t) {
		return "unknown"
	}
	return classNames[policy.Holds(t)&7]
}

// statValue reports a statistic's value, or false when it is null, absent or
// not a number (a bool statistic reads as 0 or 1).
func statValue(s dump.Stat) (float64, bool) {
	switch s.Kind {
	case dump.StatNumber, dump.StatBool:
		return s.Value, true
	}
	return 0, false
}

// numel is the product of a shape, or false when it cannot be known (a
// negative dimension, or a product beyond int64).
func numel(shape []int) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		if d == 0 {
			return 0, true
		}
		if n > math.MaxInt64/int64(d) {
			return 0, false
		}
		n *= int64(d)
	}
	return n, true
}

// shapeKnown tells a scalar's empty shape from a missing one: the reader
// gives both as an empty slice, and a tensor record without dtype, type and
// shape has no dimensions to report.
func shapeKnown(t *dump.Tensor) bool {
	return len(t.Shape) > 0 || t.Dtype != "" || t.Type != ""
}
