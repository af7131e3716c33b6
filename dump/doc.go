// Package dump reads what msprobe (MindStudio Probe) writes during training:
// the dump_path/stepN/rankM folders and dump.json, streamed entry by entry
// in execution order. (stack.json and construct.json are read by the
// analysis, which puts their code lines and module chains in the verdict.)
//
// Discover finds the rank folders of a dump (a Layout); NewReader streams
// the entries of one dump.json (an Entry, with its Tensors and their Max,
// Min, Mean and Norm, and its other values); ParseName takes an entry
// name apart. Damage in dump.json is a *FormatError naming its
// offset.
//
// Nothing here judges the data; the analysis does. The reader keeps memory
// bounded whatever the file size: an Entry is reused between calls to
// Reader.Next, and it records the byte range of each entry, so that a
// caller can come back for the details of the few entries it cares about
// (ReaderOptions.Select with Details).
//
// The format facts this package relies on (and the msprobe versions that
// introduced them) are summarised in the README's "Input formats" section.
// The format the nan-overflow-detection skill documents, which msprobe does
// not write ("Distributed.all_reduce_0_0" names, lists as objects keyed by
// position, stack.json as [function, file, line]), is read too, and marked
// as such (Name.UnderscoreCounters, Entry.KeyedByIndex).
//
// The entries msprobe writes most (the fields, each slot a tensor, a typed
// scalar or null) are read straight from the read window, member names
// compared as bytes and values scanned in place; anything else is read
// token by token, and tests hold the two to the same result on every input.
//
// The folder layout and the names are kept in internal packages
// (dumplayout, notation) that the analysis shares; this package re-exports
// what a reader of a dump needs of them: 30 names in all. The byte
// search that decides which files need parsing (internal/bytesearch) and
// the rule set (internal/policy) build on this package, never the other
// way round.
//
// It imports internal/jsonlex, internal/nonfinite, internal/dumplayout and
// internal/notation only.
//
// May import: internal/dumplayout, internal/jsonlex, internal/nonfinite,
// internal/notation.
package dump
