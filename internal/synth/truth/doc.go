// Package truth is what the generator knows happened, and what an
// analysis of the dump must therefore find: the Truth written to
// synth_truth.json.
//
// The Truth is read off what the simulation did, as the dump shows it.
// While a dumped step runs, every rank keeps a Log of the entries it
// writes that matter: which held illegitimate non-finite values (a mask's
// -inf and a receive buffer's garbage are legitimate), the physical
// collective instance and participants of each collective entry, and the
// phase each call ran in (record.go). At the end of the step the logs of
// all ranks, cut where the spec's damage cuts the files, make the step's
// view, and the README's rules (sections 5 to 7) are applied to it step by
// step (view.go, viewstep.go, truthwalk.go): the first operation whose
// inputs were clean and whose output was not, the ranks where that
// happened, the first collective that carried the damage to ranks that had
// none. A fault whose step is not dumped, or whose op is not, is seen where
// the dump first shows it; one whose trace the next dumped step no longer
// shows is recovered; one the dumped steps do not show at all is no
// anomaly. Where the dump cannot tell what the simulation knows (the phase
// of a call in a file without backward entries, whether an uncaptured
// origin's input is a weight, the group of a collective written with
// "group": null), the truth is what the README's rules make of the dump,
// and Truth.Notes say what the simulation did (truthnotes.go, from the
// Births every rank recorded).
//
// A run whose fault is a climb (spec.Fault.Climbs) also has the warning
// that was due before its first non-finite value (Truth.Ahead, ahead.go):
// read back from the dump.json files written, the statistic of the origin
// entry that crosses the limit of its dtype, at every dumped step before,
// when it rose by 5 % a step over the last four and was within a factor
// 64 of the limit (an exp's input: half of it) two steps before.
//
// An overflowing collective is its own origin on every participant (one
// event, not a tie, unless it overflows in several groups); an origin
// missing from the dump is reported as the first entry that shows the
// anomaly, with Captured false.
//
// It imports only spec. It is the generator's own reading: it shares no
// code with the analysers it checks, and nothing with the writer.
//
// May import: internal/synth/spec.
package truth
