// Package ranklist holds the small operations on lists of rank (or step)
// numbers that the analysis, the evidence and the plan share: naming them
// for people ("rank 2", "ranks 0-3,8", "steps 5-7 (ranks 0-3)" for the
// rank-steps a verdict could not read, "node 3 of 4 (ranks 6,7)" for the
// nodes of a join without a summary), and comparing them as sets.
//
// It imports internal/notation (for FormatRanges), verdict (for its unread
// rows) and the standard library.
//
// May import: internal/notation, verdict.
package ranklist
