// Package sim simulates a multi-rank training run step by step and drives
// the msprobe writer and the truth's record with what each rank does.
//
// Every step from 0 to the last dumped one runs all ranks in lockstep (one
// goroutine per rank, collectives meet at rendezvous points). A step is
// Spec.MicroBatches forward and backward passes (gradient accumulation:
// the parameter gradients add up over the passes) followed by one gradient
// synchronisation (all_reduce, ZeRO-1's reduce and broadcast, or a
// bucketed reducer, with float16 loss scaling when asked) and one update;
// entry counters run on through the step, as msprobe's do. The model is a
// GPT-style decoder laid out as data, tensor or pipeline parallel or as a
// mixture of experts.
//
// The simulation does not replay templates. Each tensor is an abstract
// value (shape, dtype, the four msprobe statistics and which non-finite
// values it holds) and every operation derives its output from its inputs
// with a rule that follows IEEE arithmetic: NaN in gives NaN out, Inf·0
// and Inf−Inf give NaN, exp overflows to +Inf, a float16 cast of a value
// above 65504 gives Inf, softmax of a row masked entirely with -inf gives
// NaN, and so on. Collectives combine the participants' values. A fault is
// a physical event in that simulation (a negative input to log, a
// duplicated token that makes sqrt'(0) infinite, a kernel that writes NaN
// into one gradient, ...). Values stay consistent at any depth and size:
// data-parallel replicas hold identical weights, everything is finite
// apart from what the fault makes.
//
// Climbs towards a dtype's limit come from the state parameters carry
// from step to step and the updates applied to them (drift.go): a feature
// scale multiplied by every update, a gate bias under a learning rate far
// too high, a bias past the edge of stability; a growing data outlier
// against a loss scale that halves at every overflow (programs.go).
//
// A rank's step (rk) computes; what msprobe would record of each call goes
// through record.go to the writer (dump.json, stack.json, construct.json)
// and, for dumped steps, to the truth's Log (seen.go); sidecar.go feeds the
// training log and the monitor. Fit sizes a run to a target dump.json size
// on dry runs that only count bytes.
//
// It imports spec, msprobewrite and truth.
//
// May import: internal/synth/msprobewrite, internal/synth/spec,
// internal/synth/truth.
package sim
