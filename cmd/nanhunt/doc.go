// Command nanhunt finds where a NaN or Inf was born in a multi-rank training
// run dumped by msprobe (see the README). It only wires the libraries
// together: flags in; the analysis through the module's root package
// (nanhunt.Run: trace, report, plan, demo; nanhunt.Watch: watch;
// nanhunt.Summarize: summarize), repro, export and synth; the verdict and
// the watch's events out through internal/report and internal/htmlreport,
// and every output checked and written by internal/outguard. It names
// internal/watch's event kinds, statuses and lock files, and
// internal/trace's summaries, as it prints and guards them.
//
// May import: dump, internal/export, internal/fsjson, internal/htmlreport,
// internal/jsonlex, internal/notation, internal/outguard, internal/plan,
// internal/ranklist, internal/report, internal/repro, internal/safeio,
// internal/sources, internal/synth, internal/trace, internal/watch,
// nanhunt (the module root), verdict.
package main
