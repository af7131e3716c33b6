// Package bytesearch looks at the bytes of a dump.json without parsing
// it, to decide which files, and which parts of them, package dump's
// Reader must parse:
//
//   - Prefilter searches a document, 32 or 64 bytes at a time where the
//     CPU can (AVX2, AVX-512, NEON), for anything the Reader could read as
//     a non-finite value, and returns the Hits: the spans that hold
//     suspects, whether the file is whole, where the first hit that may be
//     NaN or +Inf lies, and, in an indented document, the entries of the
//     hits that can only be -inf in forward API calls;
//   - LastEntry finds the last backward entry of an indented document by
//     reading it from its end, looking only at the lines that hold one of
//     the byte sequences every backward name holds (MayBeBackward);
//   - DocumentIndent and EntryLine read and write the line shapes of
//     json.dump(indent=N) output that these searches rely on.
//
// Which hits matter is the rule set's to say (package policy, which
// passes SearchRules and reads the Hits); this package only finds. Tests
// hold every search to what the Reader reads from the same bytes.
//
// It imports internal/jsonlex and internal/nonfinite only.
//
// May import: internal/jsonlex, internal/nonfinite.
package bytesearch
