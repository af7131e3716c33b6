// Package verdict holds nanhunt's answer as plain data: the Verdict and
// everything in it, with the JSON form of schema "nanhunt/verdict/v1"
// (fields may be added, none removed or changed in meaning without a new
// schema name).
//
// The analysis (package trace) makes a Verdict; package evidence adds what
// a training log and the monitor say; package plan adds what to collect
// next; the reports (text, Markdown, HTML) only read it.
//
// verdict imports only the standard library, nonfinite (the one spelling of
// non-finite values), msprobe (the config.json a Plan carries, plain data)
// and internal/fsjson (paths written byte for byte, paths.go).
package verdict
