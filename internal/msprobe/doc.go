// Package msprobe writes what msprobe reads: the config.json of a dump run
// and the Python lines that register functions for collection
// (register_custom_api). Validate checks a config.json against msprobe's
// key set, so that a generated file is accepted by the tool as written.
//
// It imports only the standard library.
//
// May import: the standard library only.
package msprobe
