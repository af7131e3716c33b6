// Package trace finds where a NaN or Inf was born in a multi-rank training
// run dumped by msprobe, and how it reached the other ranks: the rules of
// the README's "How it decides", on the fast path.
//
// Run reads the steps in order, every rank of a step in parallel, and stops
// at the first step whose anomaly lasts into the next dumped step. Each
// rank's dump.json is first searched byte by byte (bytesearch.Prefilter,
// with the rule set's parameters), which only locates; the rule set turns what it
// found into a plan (policy.PlanFile, policy.EntryWalk): a file it clears
// is not parsed, the others are walked, parsing only collectives and the
// calls the search flagged, with bounded memory. Every limit of that fast
// path either cannot change what a verdict decides or falls back to
// reading again what it left out (limits.go); the tests hold each to a few
// (internal/tinylimits) to run every fallback. On each rank the calls that hold a severe
// value (policy.Severe) give its first sign, root and first NaN; the calls
// the verdict names are placed in the step's phases (forward, backward,
// gradient reduction, optimizer) from their positions and, where those do
// not tell, construct.json and stack.json. Across ranks, collectives are
// paired by process group, api and occurrence (or by peer for
// point-to-point calls) and are the only clock: they order the ranks' first
// signs, tell sources from receivers, name the collective that carried the
// value, and find collectives that made it themselves.
//
// Across a cluster, Summarize reduces the rank folders of one node to a
// summary (nanhunt/summary/v1): each finished rank scan as a record, and
// the details a verdict shows of its named calls. Run with
// Options.Summaries turns the records back into rank scans and analyses
// them on the same code path, so the joined verdict is the one the folders
// give in one place, but for the origin timeline and what the timeline's
// reading tells of a value a call hid (hidden.go). The marks by which the nodes of one launch stop at the
// same step belong to its Job; the join counts what a node did not
// summarise, and the ranks of a node that sent no summary, as unread. A
// summary is untrusted input: its numbers are bounded (joinbounds.go), and
// the records of a step are checked against each other's collectives
// (joinpeers.go), which a true record never contradicts.
//
// Once the origin is decided, the first origin rank's dump.json of its
// step is read once more, under the caller's context (timeline.go): the
// calls around the root op, with their statistics and phases, for the
// verdict's origin.timeline, so that every report is made from the verdict
// alone; on the way, a forward NaN that a later call hid is followed to
// where it came back (hidden.go). The verdict's explanations (explain.go)
// say what the rules' fields do not: a recompute, a level that records no
// collective, receives that took their send's stage (p2pstage.go). The scan cannot keep them: the root op is known only once every
// rank is heard, and the calls before it were passed over unparsed. A join
// has the summaries, not the files, and no timeline.
//
// The result is a verdict.Verdict without a plan (package plan makes it)
// or evidence (package evidence adds it). A slow reference analyser
// (internal/reference) and its differential tests hold this package to the
// README's rules.
//
// trace imports dump (the reader), policy (the rule set), verdict (the
// answer's types), nonfinite, internal/bytesearch (the byte search),
// internal/dumplayout and internal/sidefile (what dump re-exports, and the
// helpers it does not), internal/entryat (entries read again),
// internal/callsize (sizes for a plan), internal/intranges,
// internal/ranklist, internal/safeio (it opens only regular files),
// internal/fsjson (a summary's paths byte for byte) and
// internal/tinylimits (the tests' tiny-limits mode).
//
// May import: dump, internal/ahead, internal/bytesearch, internal/callsize,
// internal/dumplayout, internal/entryat, internal/fsjson, internal/nonfinite,
// internal/notation, internal/policy, internal/ranklist, internal/safeio,
// internal/sidefile, internal/tinylimits, verdict.
package trace
