package trace

// maxKept is how many tensors, and how many other values, package dump's
// reader keeps of an entry one by one; past it the rest are merged into
// summaries (Entry.Merged), which a warning names with this bound.
// TestMaxKeptIsTheReaders holds it to the reader's.
const maxKept = 1 << 14
