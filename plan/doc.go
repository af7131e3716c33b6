// Package plan says what to collect after a verdict, as an msprobe
// config.json: the real tensors of a captured origin (so that nanhunt repro
// can re-run the op alone), every call of the step at level mix when the
// origin is not in the dump (with the register_custom_api lines for the code
// that the dump does not cover), the step before when the weights came in
// bad, the missing ranks when only receivers were read, and, with only a
// training log or the monitor, the steps and ranks they point at.
//
// plan imports verdict, msprobe (the config it writes), dump (entry names)
// and internal/ranklist.
package plan
