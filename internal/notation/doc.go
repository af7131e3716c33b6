// Package notation reads and writes the notations nanhunt shares with
// msprobe that need no file to be read: entry names taken apart
// ("Torch.sqrt.0.backward", ParseName), lists of ranks and steps ("0-3,8",
// the syntax of msprobe's config; ParseRanges, FormatRanges), and whether a
// stack frame's file is library code (LibraryFile).
//
// The reader of a dump (package dump) and the reports, which see only a
// verdict, both use it. It imports only the standard library.
//
// May import: the standard library only.
package notation
