// Package synth generates msprobe-format dumps of simulated multi-rank
// training runs with a known injected fault, together with the ground truth
// an analysis is expected to recover.
//
// A run is described by a Spec: world size, dumped steps, model layout
// (data parallel, Megatron-style tensor parallel, pipeline parallel or
// mixture of experts), dump level, on-disk format variant, optional damage
// to the written files and at most one Fault. Generate simulates every step
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
// sqrt'(0) infinite, a kernel that writes NaN into one gradient, ...), and
// the Truth is read off what the simulation did: the first operation whose
// inputs were clean and whose output was not, the ranks where that happened,
// the first collective that carried the damage to ranks that had none.
//
// Scenarios returns a catalogue of small runs, one per fault kind plus
// format variants and damaged files, for tests; Demo returns the 32-rank
// mixture-of-experts run behind nanhunt demo.
//
// Conventions worth knowing: the zero Format writes the current msprobe
// format (indent 1, stack v2, bare NaN, recorded groups, null receive
// buffers, "framework" key) with a fused optimizer whose update is not
// dumped (set OptimizerHooked for the per-parameter Tensor.* update);
// an overflowing collective is its own origin on every participant (one
// event, not a tie); an origin missing from the dump is reported as the first entry
// that shows the anomaly, with Captured false.
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
package synth
