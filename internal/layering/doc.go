// Package layering holds one test: every package of nanhunt imports only
// the packages its place in the design allows (the table in
// layering_test.go, which each package's doc.go states in words). It keeps
// the analysis apart from the reports, the rule set apart from the reader,
// and the verdict's types free of dependencies.
package layering
