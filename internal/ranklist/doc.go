// Package ranklist holds the small operations on lists of rank (or step)
// numbers that the analysis, the evidence and the plan share: naming them
// for people ("rank 2", "ranks 0-3,8"), and comparing them as sets.
//
// It imports dump (for FormatRanges) and the standard library.
package ranklist
