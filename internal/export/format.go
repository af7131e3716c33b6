package export

import (
	"fmt"
	"io"
)

// Format is the file format of an export.
type Format string

const (
	// Parquet files, gzip-compressed: typed columns, for DuckDB, pandas
	// with pyarrow, Polars and Spark.
	Parquet Format = "parquet"
	// CSV files, one header line then one line per row (RFC 4180), for
	// spreadsheets and readers without a Parquet library; see csv.go for
	// how nulls, NaN, ±Inf and lists are spelled.
	CSV Format = "csv"
)

// Formats lists the formats in the order the help names them.
var Formats = []Format{Parquet, CSV}

// ParseFormat reads a format name; "" is Parquet.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case "", Parquet:
		return Parquet, nil
	case CSV:
		return CSV, nil
	}
	return "", fmt.Errorf("unknown export format %q: want parquet or csv", s)
}

// partName is the name of each (step, rank) file.
func (f Format) partName() string { return "part-0." + string(f) }

// compression names the manifest's compression of the format's files.
func (f Format) compression() string {
	if f == CSV {
		return "none"
	}
	return "gzip"
}

// encoder writes rows to one file of a format.
type encoder interface {
	// row writes one row; it may keep the values only until it returns.
	row(r *Row) error
	// finish writes what remains (the Parquet footer, with meta as its
	// key/value metadata; CSV has no place for it) without closing the
	// underlying file.
	finish(meta [][2]string) error
}

// newEncoder starts a file of format f on w.
func newEncoder(f Format, w io.Writer) (encoder, error) {
	if f == CSV {
		return newCSVEncoder(w)
	}
	return newParquetEncoder(w), nil
}
