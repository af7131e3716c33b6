// Package nanhunt finds where a NaN or Inf was born in a multi-rank training
// run that msprobe dumped, from Go. It is the one pipeline (read → rules →
// analyse → evidence → plan) behind three calls; the nanhunt command is
// these calls with flags in front of them and printing behind.
//
// Run reads what it is given (an msprobe dump, or the summaries its nodes
// wrote; the training logs; the monitor output), analyses the dump, joins
// the logs' and the monitor's evidence, and plans what to collect next,
// and returns the verdict (package verdict). Plain data in, plain data
// out: Inputs names the files and the options, and nothing is printed or
// written. The dump, the logs and the monitor output are read at once,
// each under the context given: cancelling it stops every file being
// read, and Run returns the context's error.
//
// Watch follows the dump_path of a running job with the same rules,
// following its growing logs and monitor output too, and reports each
// step, the warnings and the alarm as WatchEvents; the alarm's verdict
// is planned as Run plans. Summarize writes the summary of the rank
// folders on one node of a run, which Run joins with the other nodes'
// (Inputs.Summaries). Both read the rules file as Run does.
//
// It imports verdict and the internal packages that do the work:
// internal/trace (the dump, the summaries and their writing),
// internal/watch (following a running job), internal/sources (the
// training logs and the monitor output, through internal/trainlog and
// internal/monitor), internal/evidence (where they agree with the dump),
// internal/plan, internal/policy (the rules file) and internal/outguard
// (where a summary may be written).
//
// May import: internal/evidence, internal/outguard, internal/plan,
// internal/policy, internal/sources, internal/trace, internal/watch,
// verdict.
package nanhunt
