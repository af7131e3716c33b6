// Package synth generates msprobe-format dumps of simulated multi-rank
// training runs with a known injected fault, together with the ground truth
// an analysis is expected to recover. It is the entry point: the Spec of a
// run, Generate and GenerateWith, Fit, the catalogue of Scenarios, Demo and
// Random. The work is done by four packages below it:
//
//	spec          the description of a run: Spec, Format, Damage, Fault,
//	              their defaults and checks (Spec.Normalized), Random
//	msprobewrite  what msprobe writes: dump.json, stack.json and
//	              construct.json in every format variant, the damage to
//	              written files, and the training log and monitor output
//	              written next to the dump (Sidecars)
//	truth         what the generator knows happened: the record of the
//	              entries each rank wrote, the view of a dumped step as the
//	              README's rules read it, and the Truth (synth_truth.json)
//	sim           the simulation of training: ranks, tensors and their
//	              arithmetic, the model layouts, micro-batches, collectives,
//	              gradient synchronisation, optimizers and faults; it drives
//	              the writer and records for the truth
//
// spec imports nothing of the module; msprobewrite and truth import only
// spec, and not each other; sim imports the three; this package imports
// them all (internal/layering holds it).
//
// A run is described by a Spec: world size, dumped steps, model layout
// (data parallel, Megatron-style tensor parallel, pipeline parallel or
// mixture of experts), the gradient synchronisation (all_reduce, ZeRO-1's
// reduce to an owner and broadcast, or a hand-written bucketed reducer),
// float16 loss scaling, dump level and data mode, on-disk format variant,
// optional damage to the written files and at most one Fault. These are
// independent options: every fault kind combines with every layout that has
// what it needs. Generate simulates every step from 0 to the last dumped
// one and writes
//
//	dir/stepN/rankR/dump.json
//	dir/stepN/rankR/stack.json
//	dir/stepN/rankR/construct.json
//	dir/synth_truth.json
//
// for the dumped steps only. The same spec gives the same files, byte for
// byte.
//
// Scenarios returns a catalogue of small runs, one per fault kind plus
// format variants, damaged files, the patterns of real runs, statistics
// that climb towards their dtype's limit before the first non-finite
// value (with the warning that is due in Truth.Ahead) and clean runs
// that climb or hold large values without heading anywhere, for tests;
// Random returns a valid random spec for a seed, for randomized tests; Demo
// returns the 32-rank mixture-of-experts run behind nanhunt demo.
//
// Runs of any size: Spec.TargetFileBytes asks for dump.json files of about
// that many bytes, and Fit (which Generate calls) measures the spec on two
// dry runs of one step and chooses the layers (up to 32 per pipeline stage)
// and then the micro-batches per step that reach it.
//
// It imports only the standard library outside the generator: what it
// writes is checked by the readers, not shared with them.
//
// May import: internal/synth/msprobewrite, internal/synth/sim,
// internal/synth/spec, internal/synth/truth.
package synth
