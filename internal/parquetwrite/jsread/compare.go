package jsread

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"testing"
)

// SameCell reports how a cell hyparquet read differs from the value that
// was written, or nil when it is the same. want is nil (a null), a bool, an
// int32, an int64, a float64 (NaN equal to NaN, -0 told from 0), a string
// or an []int64 (a list).
func SameCell(got, want any) error {
	switch w := want.(type) {
	case nil:
		if got != nil {
			return fmt.Errorf("read %#v, wrote null", got)
		}
	case bool:
		if g, ok := got.(bool); !ok || g != w {
			return fmt.Errorf("read %#v, wrote %v", got, w)
		}
	case int32:
		return sameInt(got, int64(w))
	case int64:
		return sameInt(got, w)
	case float64:
		g, err := Double(got)
		if err != nil {
			return err
		}
		if !(math.IsNaN(w) && math.IsNaN(g)) && math.Float64bits(g) != math.Float64bits(w) {
			return fmt.Errorf("read %v, wrote %v", g, w)
		}
	case string:
		if g, ok := got.(string); !ok || g != w {
			return fmt.Errorf("read %#v, wrote %q", got, w)
		}
	case []int64:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("read %#v, wrote the list %v", got, w)
		}
		for i := range w {
			if err := sameInt(g[i], w[i]); err != nil {
				return fmt.Errorf("list element %d: %w", i, err)
			}
		}
	default:
		return fmt.Errorf("cannot compare with a written %T", want)
	}
	return nil
}

// sameInt compares a cell with an integer, exactly.
func sameInt(got any, want int64) error {
	n, ok := got.(json.Number)
	if !ok {
		return fmt.Errorf("read %#v, wrote the integer %d", got, want)
	}
	g, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || g != want {
		return fmt.Errorf("read %s, wrote %d", n, want)
	}
	return nil
}

// Double is a double cell's value: a JSON number, or one of the spellings
// JSON lacks.
func Double(cell any) (float64, error) {
	switch c := cell.(type) {
	case json.Number:
		return strconv.ParseFloat(string(c), 64)
	case string:
		switch c {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		case "-0":
			return math.Copysign(0, -1), nil
		}
	}
	return 0, fmt.Errorf("read %#v, wrote a double", cell)
}

// CheckRows fails the test at the first cell hyparquet read differently
// from want, which holds the written rows in file order, one value per
// column as SameCell takes them; it also checks the row count in the footer.
func CheckRows(tb testing.TB, name string, f *File, want [][]any) {
	tb.Helper()
	if f.NumRows != int64(len(want)) || len(f.Rows) != len(want) {
		tb.Fatalf("%s: hyparquet read %d rows (footer %d), %d were written", name, len(f.Rows), f.NumRows, len(want))
	}
	for i, w := range want {
		if len(w) != len(f.Columns) {
			tb.Fatalf("%s row %d: %d values written, hyparquet reads %d columns", name, i, len(w), len(f.Columns))
		}
		for c := range w {
			if err := SameCell(f.Rows[i][c], w[c]); err != nil {
				tb.Fatalf("%s row %d column %s: %v", name, i, f.Columns[c], err)
			}
		}
	}
}
