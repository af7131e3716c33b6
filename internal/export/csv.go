package export

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"
)

// The CSV files hold the columns of Columns, in that order, under a header
// line of their names, one line per row, fields quoted as RFC 4180 says
// (a field holding a comma, a double quote, a carriage return or a line
// feed, or starting with a space, is quoted, its quotes doubled; lines end
// with "\n"). The file is UTF-8 without a byte order mark, and holds the
// dump's strings byte for byte. The values are spelled:
//
//   - integers in decimal; booleans true and false;
//   - doubles in the shortest decimal that reads back to the same double
//     ("0.1", "1e+21", "-0"), NaN as NaN, +Inf as Infinity, -Inf as
//     -Infinity: the words msprobe writes in dump.json, which Python's
//     float, pandas, Polars, DuckDB and Go's strconv.ParseFloat all read;
//   - shape as a list of integers in brackets, "[4,7,1]", "[]" for a
//     scalar, as DuckDB and JSON write lists;
//   - a null (the nullable columns: shape, numel, max, min, mean, norm) as
//     an empty field. The other columns are never null, so an empty field
//     there is an empty string (dtype when msprobe wrote none).
//
// A number column thus tells a null (the empty field) from NaN. Go's
// encoding/csv reader drops a carriage return before a line feed even in a
// quoted field; the file holds it.
const (
	csvNaN    = "NaN"
	csvInf    = "Infinity"
	csvMinInf = "-Infinity"
	csvNull   = ""
)

// csvEncoder writes rows as CSV lines.
type csvEncoder struct {
	w      *csv.Writer
	fields []string // the row being written
	list   []byte   // a shape being spelled
}

func newCSVEncoder(w io.Writer) (*csvEncoder, error) {
	e := &csvEncoder{w: csv.NewWriter(w), fields: make([]string, len(Columns))}
	header := make([]string, len(Columns))
	for i, c := range Columns {
		header[i] = c.Name
	}
	return e, e.w.Write(header)
}

// row writes one row in the order of Columns.
func (e *csvEncoder) row(r *Row) error {
	f := e.fields
	f[0] = strconv.FormatInt(int64(r.Step), 10)
	f[1] = strconv.FormatInt(int64(r.Rank), 10)
	f[2] = strconv.FormatInt(int64(r.EntryIndex), 10)
	f[3], f[4], f[5] = r.EntryName, r.API, r.Direction
	f[6] = strconv.FormatBool(r.Module)
	f[7], f[8], f[9] = r.Field, r.Slot, r.Dtype
	f[10] = csvNull
	if r.Shape != nil {
		f[10] = e.shape(r.Shape)
	}
	f[11] = csvNull
	if r.Numel != nil {
		f[11] = strconv.FormatInt(*r.Numel, 10)
	}
	for i, v := range [4]*float64{r.Max, r.Min, r.Mean, r.Norm} {
		f[12+i] = csvDouble(v)
	}
	f[16] = r.Nonfinite
	f[17] = strconv.FormatBool(r.RequiresGrad)
	return e.w.Write(f)
}

// shape spells a shape as [d0,d1,...].
func (e *csvEncoder) shape(dims []int64) string {
	b := append(e.list[:0], '[')
	for i, d := range dims {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, d, 10)
	}
	b = append(b, ']')
	e.list = b
	return string(b)
}

// csvDouble spells a statistic; nil is a null.
func csvDouble(v *float64) string {
	switch {
	case v == nil:
		return csvNull
	case math.IsNaN(*v):
		return csvNaN
	case math.IsInf(*v, 1):
		return csvInf
	case math.IsInf(*v, -1):
		return csvMinInf
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// finish flushes the lines; CSV has no place for metadata, which the
// manifest holds.
func (e *csvEncoder) finish([][2]string) error {
	e.w.Flush()
	return e.w.Error()
}
