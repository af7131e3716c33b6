// Package parquetwrite writes Parquet files: flat columns of booleans,
// 32- and 64-bit integers, doubles and UTF-8 strings, required or optional,
// and optional lists of 64-bit integers, in row groups of data pages
// (version 1), PLAIN-encoded or, for strings, dictionary-encoded, each page
// gzip-compressed or stored.
//
// It is the part of the Parquet format that nanhunt's export needs and
// nothing more, written with the standard library only, so that building
// nanhunt compiles no Parquet dependency. The tests read every file it
// writes back with two independent Parquet implementations: parquet-go, and
// hyparquet in JavaScript under Node (package jsread).
//
// Memory is one row group's compressed pages plus one open page per
// column: the pages are encoded as rows arrive, and each row group's column
// chunks are written out, one after the other, when it is full.
//
// May import: the standard library only.
package parquetwrite
