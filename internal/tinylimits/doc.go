// Package tinylimits carries one test option through a context: that the
// analysis (package trace) hold every limit of its rank scan to a small
// number (one to four), so that every fallback those limits lead to runs
// on small dumps, where the differential tests compare the analysis with
// the reference analyser (internal/reference) and the hand-written cases
// (internal/cases) hold both to their expected verdicts. A limit of the fast path
// either falls back to reading the whole file or cannot change what the
// verdict decides; in this mode the tests show which.
//
// It imports only the standard library.
//
// May import: the standard library only.
package tinylimits
