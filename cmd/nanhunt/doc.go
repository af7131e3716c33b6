// Command nanhunt finds where a NaN or Inf was born in a multi-rank training
// run dumped by msprobe (see the README). It only wires the libraries
// together: flags in; the analysis through the module's root package
// (nanhunt.Run: trace, report, plan, demo), internal/watch (watch, its
// logs and monitor followed by internal/sources), internal/trace
// (summarize), repro, export and synth; the verdict out through
// internal/report and internal/htmlreport, and every output checked and
// written by internal/outguard.
package main
