// Package layering holds one test: every package of nanhunt imports only
// the packages its doc.go allows. Each package comment ends with the
// sentence "May import: a, b, c." (the module's packages by path, or "the
// standard library only."); the test reads it and checks each non-test
// file's imports. It keeps the analysis apart from the reports, the rule
// set apart from the reader, and the verdict's types free of
// dependencies.
//
// May import: the standard library only.
package layering
