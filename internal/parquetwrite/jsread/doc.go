// Package jsread reads a Parquet file with hyparquet, a Parquet reader
// written in JavaScript and run under Node, for the tests of
// internal/parquetwrite and internal/export: a second implementation of the
// format, sharing no code with the writer or with parquet-go, that decodes
// every page (gzip through Node's zlib) and reports the footer, the schema
// and every cell.
//
// The reader's version is pinned in
// internal/parquetwrite/testdata/jsreader/package.json and its lock file;
// .ci/run installs it with npm ci. A test that needs it and finds Node or
// the package missing fails and says how to install them.
//
// It imports only the standard library.
//
// May import: the standard library only.
package jsread
