// Package intranges reads and writes lists of integers as ranges, the
// syntax of msprobe's config and of nanhunt's --steps and --ranks:
// "0,3-7" (Parse), [0 1 2 5 7 8] as "0-2,5,7,8" (Format), and the numbers
// a sorted list lacks between two bounds (Missing), without listing them.
//
// It imports only the standard library.
package intranges
