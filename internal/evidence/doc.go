// Package evidence joins a dump's verdict with what a training log (package
// trainlog) and msprobe's monitor (package monitor) say: it reduces each to
// the verdict's evidence.log and evidence.monitor (FromLog, FromMonitor),
// lists where the three agree and where they truly cannot all be right
// (Combine), and, without a dump, makes the verdict of what to dump.
//
// evidence imports verdict, plan, trainlog, monitor, internal/intranges
// and internal/ranklist.
//
// May import: internal/monitor, internal/notation, internal/plan,
// internal/ranklist, internal/trainlog, verdict.
package evidence
