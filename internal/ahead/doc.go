// Package ahead judges series of statistics heading for overflow: a Max or
// Min that climbs, dumped step after step, towards the largest value of
// the dtype it is stored in, or the input of an exp climbing towards the
// value past which its result overflows. It turns the entries of one step
// into the values to watch (Observe), a value's series into a judgement
// at its last step (Judge), and the series of every rank into the
// verdict's warnings, most urgent first (Warnings).
//
// The rule's parameters are the rule set's (package policy); reading the
// dump is the caller's: package trace finds the entries without parsing
// the files (bytesearch.FindAhead), the reference analyser parses them
// whole.
//
// Beside the dump, the rule reads the series the training log and the
// monitor's readers follow (package climb): MonitorJudge and LogJudge are
// the judges they are given, FromMonitor and FromLog turn the series that
// fired into warnings, and Merge adds them to the dump's.
//
// May import: dump, internal/climb, internal/policy, verdict.
package ahead
