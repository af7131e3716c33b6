// Package cases holds the hand-written dumps that test the rules of the
// README's "How it decides" as data: one txtar file a case under
// testdata/cases, each with the files of its rank folders and the verdict
// expected of it. The runner (cases_test.go) lays every case out in a
// temporary folder and holds the fast path (internal/trace), the fast path
// with tiny limits (internal/tinylimits) and the reference analyser
// (internal/reference) to the expected verdict; `go test
// ./internal/cases -update` writes the reference's verdict back into the
// files (read `git diff` of testdata before keeping it: a changed line is
// a changed verdict). FromDir reads a dump written by other means (a
// test, a real run cut down) into a new case's files.
//
// The format of a case file (txtar: a comment, then files each introduced
// by a line "-- NAME --"):
//
//   - the comment says what the case shows;
//   - "options": one setting a line: "strict", "steps 3,4", "ranks 0,1",
//     "path step0/rank0" (the folder or file the analysis is given,
//     relative to the dump; the dump itself when absent);
//   - "dirs": folders to make, one a line (a step folder with no rank
//     folder, a dump.json that is a folder);
//   - "links": symbolic links, one a line, "NAME -> TARGET", TARGET
//     relative to the dump;
//   - a file of the dump by its path (step0/rank0/dump.json): JSON written
//     compactly, one member of "data" (or of the top level) a line, and
//     laid out on disk the way msprobe writes it (Python's json.dump with
//     indent=1);
//   - "raw " and a path: a file written byte for byte (a file cut short,
//     one that does not decode);
//   - "verdict": the expected verdict, one field a line (see the runner);
//   - "fast": what only the fast path's verdict says, one check a line
//     (suppressed ops, reasons, warnings, an error; fastchecks_test.go
//     lists them), checked with the fast path's normal limits (tiny ones
//     cap these lists); -update leaves it.
//
// Files: txtar.go (the archive format), case.go (a case: parse, format,
// lay out), layout.go (msprobe's JSON layout and the compact one).
//
// Imports: the standard library and internal/jsonoracle.
//
// May import: internal/jsonoracle.
package cases
