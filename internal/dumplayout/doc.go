// Package dumplayout finds the folders of an msprobe dump: the
// dump_path/stepN/rankM tree (with MindSpore's graph/ and pynative/ levels,
// 8.x's "rank" and 26.x's procPID folders, folders reached through symbolic
// links) and what is odd about it (notes, gaps between steps and ranks).
//
// Package dump re-exports what a reader of a dump needs (Discover, Layout
// and the types it holds); the helpers the analysis shares with it (Gaps,
// SortNotes, Numbered, IsFolder, MaxFolderNumber) stay here.
//
// It imports internal/intranges only.
//
// May import: internal/notation.
package dumplayout
