// Package policy is nanhunt's one rule set: everything that decides what a
// value in a dump means, compiled once and used by both the byte search that
// clears files without parsing them and the analysis that walks the others.
//
//   - which statistics decide whether a tensor holds NaN or Inf (Max and Min;
//     never Mean or Norm) — [Holds], [IgnoredStats];
//   - which values an op makes on purpose or never reads: uninitialised memory
//     from creation ops, the -inf of masks, the destinations that in-place
//     ops and out= overwrite, and the user's --rules — [Builtin], [Rule],
//     [Policy];
//   - what every collective sends and receives, its root or peer — [Collective];
//   - in which phase of a training step a call ran, from construct.json and
//     stack.json — [ParentPhase], [ReadFrames];
//   - what is severe where: NaN and +Inf always, -Inf in gradients, weights,
//     communication and the update, never in the forward-named computations
//     where masks live — [Severe], [Site];
//   - when a file's byte-search hits say nothing can be an anomaly —
//     [ClearsFile] — and, for the others, what to parse: the plan of a file
//     and of its entries, from where the search located its suspects —
//     [PlanFile], [EntryWalk]. The search only locates; the plan decides,
//     with the same severity rules as the analysis.
//
// A new rule goes here, in the file of its kind (builtin.go for exclusions,
// collective.go for collectives, phase.go for phases), and nowhere else.
//
// policy imports dump (for the facts it judges), internal/notation and
// internal/sidefile (the passes names say, the stack frames), internal/bytesearch
// (the byte search whose hits it judges), nonfinite and internal/safeio (to
// open a rules file); neither dump nor bytesearch imports policy: the byte
// search takes its parameters as plain data (bytesearch.SearchRules).
//
// May import: dump, internal/bytesearch, internal/nonfinite, internal/notation,
// internal/safeio, internal/sidefile.
package policy
