// Package repro writes a single-op reproduction case from an msprobe
// "tensor"-task dump: the saved input tensors of one dump.json entry, a
// case.json that describes the call, and a repro.py that re-runs the call
// alone with PyTorch and tells whether the NaN/Inf comes back.
//
// A case folder holds
//
//	*.pt         the tensors repro.py loads, copied under their data_name
//	case.json    entry, api, direction, step, rank, how the API is called,
//	             the non-tensor arguments with their positions (input_args
//	             index, input_kwargs key) and the recorded Max/Min/Mean/Norm
//	             of every output slot (schema nanhunt/repro-case/v1)
//	repro.py     the call, rebuilt; needs Python 3.9+ and torch 1.13+ only
//
// For a forward entry, repro.py loads the saved inputs, calls the API with
// the arguments in place (Torch.x is torch.x, Functional.x
// torch.nn.functional.x, Tensor.x a method of the first argument, NPU.x
// torch_npu.x, Aten.x torch.ops.aten.x) and compares the outputs with the
// recorded statistics. For a backward entry, it loads the inputs of the
// forward entry with the same name, sets requires_grad on the floating-point
// ones whose gradient was recorded, re-runs the forward, calls
// torch.autograd.backward with the saved gradients of the outputs (the
// backward entry's "input"), and compares each input's .grad with the
// backward entry's "output" slot of the same position. msprobe records the
// gradients leaving the last autograd node an API created, so for composite
// APIs the slots may not line up; repro.py then says the shapes differ.
//
// repro.py exits 1 when its results hold NaN or Inf (the value comes back),
// 0 when they are finite, and 2 when the call cannot run: a torch.distributed
// call (it needs the other ranks), a custom API until its import is written
// into the marked TODO, a missing device or module, or an exception.
//
// The Go side decides everything it can (which Python callable an entry
// name maps to, what each non-tensor argument was, which saved gradient
// goes with which output), so that repro.py stays plain and readable. Every
// string taken from dump.json reaches repro.py as an escaped Python literal
// or a sanitised comment.
//
// Nothing is ever written inside the dump.
//
// # What it trusts
//
// A dump is untrusted input: dump.json, its header and its tensor files may
// have been made to do harm. What repro relies on, and what it checks:
//
//   - Paths. Tensor files are copied only from inside the dump folder given
//     (a dump.json's folder when a file is given), opened through an
//     os.Root of it: the header's dump_data_dir is followed only when it
//     lies inside, a data_name counts by its base name only, and a symbolic
//     link that leads out of the folder is refused, even one swapped in
//     after the check. A FIFO or a device is refused without blocking.
//   - Contents. A tensor file is a pickle, which can run code when it is
//     loaded. repro.py loads .pt files with torch.load(weights_only=True)
//     and .npy files with numpy.load(allow_pickle=False), and refuses (exit
//     status 2, naming the file) what cannot be loaded so. Before copying,
//     repro reads each file without running it (checkTensorFile): the
//     pickle of a torch.save file, zip or legacy, may name only what a
//     saved tensor refers to (allowedGlobal), and a .npy header only a bool
//     or number dtype; anything else is refused. This check is the early
//     refusal; torch's weights-only loader is the guard.
//   - Permissions. A copy gets the source's permission bits masked by 0644:
//     never more than the source has.
//   - Writes. The case folder is written all or nothing (caseWriter): each
//     file goes to a temporary file in the folder, renamed into place once
//     every file was written; a failure or a cancelled context removes the
//     temporary files (and the folder when the run made it).
//
// The strings of dump.json reach repro.py only as escaped Python literals
// or sanitised comments, and case.json through encoding/json.
//
// It imports dump, internal/jsonlex, internal/nonfinite, internal/intranges,
// internal/safeio, internal/outguard
// (never to write inside the dump), trace (to find the root op when none is
// named) and verdict.
//
// May import: dump, internal/jsonlex, internal/nonfinite, internal/notation,
// internal/outguard, internal/safeio, internal/trace, verdict.
package repro
