// Package verdict holds nanhunt's answer as plain data: the Verdict and
// everything in it, with the JSON form of schema "nanhunt/verdict/v1"
// (fields may be added, none removed or changed in meaning without a new
// schema name; Revision counts the additions).
//
// The analysis (package trace) makes a Verdict; package evidence adds what
// a training log and the monitor say; package plan adds what to collect
// next; the reports (text, Markdown, HTML, the skill's shapes) only read
// it, and read nothing else: what they show of the dump (the origin
// rank's timeline, the dump's path) is in it.
//
// verdict imports only the standard library, nonfinite (the one spelling of
// non-finite values), msprobe (the config.json a Plan carries, plain data)
// and internal/fsjson (paths written byte for byte, paths.go).
//
// May import: internal/fsjson, internal/msprobe, internal/nonfinite.
package verdict
