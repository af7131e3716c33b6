// Package dump reads what msprobe (MindStudio Probe) writes during training:
// the dump_path/stepN/rankM folders, dump.json streamed entry by entry in
// execution order, stack.json (both formats) and construct.json.
//
// Nothing here judges the data; package trace does. The reader keeps memory
// bounded whatever the file size: an Entry is reused between calls to
// Reader.Next, and it records the byte range of each entry so that a caller
// can come back for the details of the few entries it cares about.
//
// The format facts this package relies on (and the msprobe versions that
// introduced them) are summarised in the README's "Input formats" section.
// The format the nan-overflow-detection skill documents, which msprobe does
// not write ("Distributed.all_reduce_0_0" names, lists as objects keyed by
// position, stack.json as [function, file, line]), is read too, and marked
// as such (Name.UnderscoreCounters, Entry.KeyedByIndex, StackFile.Triples).
//
// The entries msprobe writes most (the fields, each slot a tensor, a typed
// scalar or null) are read straight from the read window, member names
// compared as bytes and values scanned in place; anything else is read
// token by token, and tests hold the two to the same result on every input.
//
// It imports internal/jsonlex, nonfinite and internal/notation (entry names,
// rank lists and library files, which the reports read from a verdict
// without this package) only; the rule set (package policy) imports it,
// never the other way round.
package dump
