// Package export writes every tensor statistic of an msprobe dump to
// Parquet files, one file per (step, rank), for analysts who want to query
// the whole dump with DuckDB, pandas, Polars or Spark rather than read a
// verdict; or, with Options.Format CSV, to CSV files with the same columns,
// for spreadsheets and readers without a Parquet library (csv.go says how
// each value is spelled).
//
// The files are laid out Hive-style, OUT/step=N/rank=R/part-0.parquet (with
// a mode=graph/ or mode=pynative/ level above when the dump has MindSpore's
// execution-mode folders), and hold one row per tensor record of dump.json in
// file order; Row is the schema. OUT/_nanhunt_export.json describes the
// export: the source, the columns, the counts and what could not be read.
//
// Memory stays bounded whatever the size of the dump: dump.json is streamed
// entry by entry, rows are handed to the file writer in small batches, and
// each file's row groups (or CSV lines) are flushed to disk as they fill. A damaged
// dump.json yields the rows before the damage and a warning with the byte
// offset; the other files are written as usual.
//
// It imports dump, internal/safeio, internal/outguard (never to write
// inside the dump), internal/parquetwrite (the file format) and policy
// (which statistics decide what a tensor holds).
//
// May import: dump, internal/outguard, internal/parquetwrite, internal/policy,
// internal/safeio.
package export
