// Package msprobewrite writes what msprobe and the training around it
// leave on disk, from values the simulation hands it: dump.json (entries
// of forward calls, backwards, module calls and parameters_grad, with
// the tensors as msprobe records them: dtype, shape, the four statistics,
// requires_grad), stack.json (v1 or v2, the call stacks interned as
// chains of frames), construct.json, in every variant of spec.Format
// (indent, non-finite spelling, statistics keys and strings, groups,
// framework key). ApplyDamage rewrites, cuts and removes written files as
// spec.Damage asks. Next to the dump it writes the Megatron-LM training
// log of the last rank (TrainLog) and the msprobe monitor's CSV files of
// every rank (Monitor), as Sidecars ask.
//
// The writer formats JSON by hand, the way Python's json.dump(indent=1)
// does (bare NaN/Infinity tokens, shortest round-trip floats as in repr),
// into one large buffer per file that is written in 1 MiB pieces, and
// reuses the text of tensors it wrote recently (an op's output is the next
// op's input, a weight is an input of every micro-batch), so large runs
// are written at hundreds of MB/s: about 30 s for 10 GB on two cores.
//
// It imports only spec: it knows nothing of the simulation that calls it
// (the simulation's tensors carry a Tensor, see TensorValue) nor of the
// truth.
//
// May import: internal/synth/spec.
package msprobewrite
