// Package watch follows a running msprobe job: it analyses each step of a
// dump_path as soon as msprobe has finished writing it, and raises the
// alarm at the first anomaly that lasts, with the same rules as an offline
// trace of the finished run.
//
// msprobe rewrites a rank's whole dump.json at each flush, so a rank's
// step is finished when its dump.json has not changed for a while and is
// not empty, or when that rank has begun a later step. A step is judged
// when each rank seen has finished it (a rank that a later step has but
// this one lacks will not write it: it is unread there, "no folder"); or,
// when some ranks have and the step has not moved on for RankTimeout,
// without the others, which never finished it (a crash, a file that never
// settles); or, when the job ends (IdleExit), on what its ranks hold then.
// Every rank seen is expected at every step (trace.Options.Expected), so a
// step is clean only when each was read whole; otherwise it is incomplete
// or unread, its rank-steps are listed by reason ("never finished" for the
// ranks the watch stopped waiting for), and the watch can no longer end
// clean. Rank-steps whose folders appear after the watch has passed their
// step (a rank first seen after steps it has folders in were checked, a
// step folder that appears after later ones) are read then: a step event
// marked Late, or an anomaly confirmed by the step after it. Steps are checked in order, each once: a clean step is never
// read again. An anomaly is confirmed by reading the step before it (when
// dumped) and the next dumped step, so that an overflow the loss scaler
// skipped is reported as recovered, not as an alarm.
//
// Sources other than the dump (a growing training log, the monitor's CSV
// files: Options.Sources, followed by package sources) plug in as
// Sidecars: the first step any of them shows non-finite
// is reported as soon as it is seen, and the alarm names the source that
// saw the anomaly first. When the dump cannot show it (it has checked that
// step and the next without a lasting anomaly, it has no step left to
// check RankTimeout after the sighting, or the watch ends), the alarm is
// raised from that source alone, with a verdict without origin that holds
// what the sources said and what to dump. A sidecar that cannot be read is
// reported (EventWarning) and named in the alarm's verdict until it can.
// The verdict of every alarm carries its plan (package plan), shaped by
// Options.Plan and sized from the dump.
//
// Before any alarm, each step checked without an anomaly is also judged
// for statistics heading for overflow (trace.AheadAt, with the rank
// folders of the dumped steps before it, kept per rank for as many steps
// as a series shows, and one more for the alarm's): each call's tensor
// statistic that qualifies is reported once, at the first step it does
// (EventWarning with Ahead). The step's own check leaves them unsearched
// (trace.Options.NoAhead), so a step's files are searched for them once;
// the files of the steps before are read only for the calls that have a
// value close to its limit and have not been warned of. The alarm's
// verdict gets every warning judged at the step before its origin, as an
// offline trace gives it.
//
// A watch's output folder and state file are its own while it runs: Lock
// takes a lock file beside each, so that a second watch on either is
// refused at once rather than raise the same alarm again.
//
// It imports internal/dumplayout (folder names), trace, verdict, internal/plan,
// internal/policy (how many steps a warning's series reaches back),
// internal/sources (the logs and the monitor), internal/ranklist (rank
// lists in words), internal/outguard (to write its state) and
// internal/safeio (to read it back without blocking on what is not a
// regular file).
//
// May import: internal/dumplayout, internal/outguard, internal/plan,
// internal/policy, internal/ranklist, internal/safeio, internal/sources, internal/trace,
// verdict.
package watch
