// Package robustness holds the adversarial test table: hostile inputs that
// the tests make themselves (named pipes, links to devices, sparse files of
// many gigabytes, hard links, entries with half a million tensors, strings
// of hundreds of megabytes, side files that are too big, files rewritten
// while they are read, odd folder names, saved verdicts with holes), each
// run through the nanhunt binary as a child process. Every case asserts its
// exit status, its message, a bound on wall time and on the child's peak
// RSS, and that no input changed. The table is also docs/robustness.md,
// which the test writes with -update and holds to it otherwise.
//
// It has no non-test code and imports no nanhunt package.
//
// May import: the standard library only.
package robustness
