// Package plan says what to collect after a verdict, as an msprobe
// config.json: the real tensors of a captured origin (so that nanhunt repro
// can re-run the op alone), every call of the step at level mix when the
// origin is not in the dump (with the register_custom_api lines for the code
// that the dump does not cover), the step before when the weights came in
// bad, the missing ranks when only receivers were read, and, with only a
// training log or the monitor, the steps and ranks they point at.
//
// A NaN that moves does not come back at the same step: the plan for a
// captured origin is "any-step" by default (the same narrow list of APIs on
// every step and every rank, with a nanhunt watch that ends the run at the
// first lasting anomaly) when its estimated size fits a budget, and
// "same-step" (the steps and ranks of this anomaly) otherwise or when asked.
// The estimate comes from the shapes and dtypes the statistics dump
// recorded for the listed APIs (Measure).
//
// plan imports verdict, msprobe (the config it writes), dump (entry names),
// internal/callsize (the dump it measures), internal/intranges,
// internal/safeio and internal/ranklist.
//
// May import: dump, internal/callsize, internal/msprobe, internal/notation,
// internal/ranklist, internal/safeio, verdict.
package plan
