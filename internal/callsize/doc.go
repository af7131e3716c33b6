// Package callsize sizes what a tensor dump (data_mode "all") of some ops
// would save, from a statistics dump.json: the calls of each op, their
// tensors, and the bytes of the tensor files and of the entries. A plan
// uses it to say what dumping those ops again would cost.
//
// MeasureFile searches the ops' names as bytes and parses only their
// entries; Measure reads every entry. They give the same sizes.
//
// It imports package dump, internal/entryat and internal/bytesearch.
//
// May import: dump, internal/bytesearch, internal/entryat.
package callsize
