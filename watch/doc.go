// Package watch follows a running msprobe job: it analyses each step of a
// dump_path as soon as msprobe has finished writing it, and raises the
// alarm at the first anomaly that lasts, with the same rules as an offline
// trace of the finished run.
//
// msprobe rewrites a rank's whole dump.json at each flush, so a rank's
// step is complete when its dump.json has not changed for a while and
// reads as whole JSON, or when that rank has begun a later step. A step is
// complete when each of its ranks is; a rank that a later step has but this
// one lacks was not dumped there. Steps are checked in order, each once:
// a clean step is never read again. An anomaly is confirmed by reading the
// step before it (when dumped) and the next dumped step, so that an
// overflow the loss scaler skipped is reported as recovered, not as an
// alarm.
//
// Sources other than the dump (a growing training log, the monitor's CSV
// files) plug in as Sidecars: the first step any of them shows non-finite
// is reported as soon as it is seen, and the alarm names the source that
// saw the anomaly first.
//
// It imports dump (folder names), trace, verdict and internal/outguard (to
// write its state).
package watch
