// Package synth generates msprobe-format dumps of simulated multi-rank
// training runs with a known injected fault, together with the ground truth
// an analysis is expected to recover.
//
// A run is described by a Spec: world size, dumped steps, model layout
// (data parallel, Megatron-style tensor parallel, pipeline parallel or
// mixture of experts), the gradient synchronisation (all_reduce, ZeRO-1's
// reduce to an owner and broadcast, or a hand-written bucketed reducer),
// float16 loss scaling, dump level and data mode, on-disk format variant,
// optional damage to the written files and at most one Fault. These are
// independent options: every fault kind combines with every layout that has
// what it needs. Generate simulates every step
// from 0 to the last dumped one, all ranks of a step in lockstep (one
// goroutine per rank, collectives meet at rendezvous points), and writes
//
//	dir/stepN/rankR/dump.json
//	dir/stepN/rankR/stack.json
//	dir/stepN/rankR/construct.json
//	dir/synth_truth.json
//
// for the dumped steps only. A step is Spec.MicroBatches forward and
// backward passes (gradient accumulation: the parameter gradients add up
// over the passes) followed by one gradient synchronisation and one update;
// entry counters run on through the step, as msprobe's do.
//
// The simulation does not replay templates. Each tensor is an abstract value
// (shape, dtype, the four msprobe statistics and which non-finite values it
// holds) and every operation derives its output from its inputs with a rule
// that follows IEEE arithmetic: NaN in gives NaN out, Inf·0 and Inf−Inf give
// NaN, exp overflows to +Inf, a float16 cast of a value above 65504 gives
// Inf, softmax of a row masked entirely with -inf gives NaN, and so on.
// Collectives combine the participants' values. A fault is a physical event
// in that simulation (a negative input to log, a duplicated token that makes
// sqrt'(0) infinite, a kernel that writes NaN into one gradient, ...).
//
// The Truth is read off what the simulation did, as the dump shows it.
// While a dumped step runs, every rank records which of the entries it
// writes held illegitimate non-finite values (a mask's -inf and a receive
// buffer's garbage are legitimate), the physical collective instance and
// participants of each collective entry, and the phase each call ran in
// (seen.go). At the end of the step the records, cut where the spec's
// damage cuts the files, make the step's view, and the README's rules
// (sections 5 to 7) are applied to it step by step (view.go, truthwalk.go):
// the first operation whose inputs were clean and whose output was not, the
// ranks where that happened, the first collective that carried the damage
// to ranks that had none. A fault whose step is not dumped, or whose op is
// not, is seen where the dump first shows it; one whose trace the next
// dumped step no longer shows is recovered; one the dumped steps do not
// show at all is no anomaly. Where the dump cannot tell what the simulation
// knows (the phase of a call in a file without backward entries, whether an
// uncaptured origin's input is a weight, the group of a collective written
// with "group": null), the truth is what the README's rules make of the
// dump, and Truth.Notes say what the simulation did.
//
// Scenarios returns a catalogue of small runs, one per fault kind plus
// format variants, damaged files and the patterns of real runs, for tests;
// Random returns a valid random spec for a seed, for randomized tests; Demo
// returns the 32-rank mixture-of-experts run behind nanhunt demo.
//
// Conventions worth knowing: the zero Format writes the current msprobe
// format (indent 1, stack v2, bare NaN, recorded groups, null receive
// buffers, "framework" key) with a fused optimizer whose update is not
// dumped (set OptimizerHooked for the per-parameter Tensor.* update);
// an overflowing collective is its own origin on every participant (one
// event, not a tie, unless it overflows in several groups); an origin
// missing from the dump is reported as the first entry that shows the
// anomaly, with Captured false. The same spec gives the same files, byte
// for byte.
//
// Runs of any size: Spec.TargetFileBytes asks for dump.json files of about
// that many bytes, and Fit (which Generate calls) measures the spec on two
// dry runs of one step and chooses the layers (up to 32 per pipeline stage)
// and then the micro-batches per step that reach it. The world size, the
// dumped steps and the model layout are the spec's own. Values stay
// consistent at any depth and size: data-parallel replicas hold identical
// weights, everything is finite apart from what the fault makes.
//
// The writer formats JSON by hand, the way Python's json.dump(indent=1) does
// (bare NaN/Infinity tokens, shortest round-trip floats as in repr), into
// one large buffer per file that is written in 1 MiB pieces, and reuses the
// text of tensors it wrote recently (an op's output is the next op's input,
// a weight is an input of every micro-batch), so large runs are written at
// hundreds of MB/s: about 30 s for 10 GB on two cores.
//
// It imports only the standard library: what it writes is checked by the
// readers, not shared with them.
package synth
