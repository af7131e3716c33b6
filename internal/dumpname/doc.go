// Package dumpname takes apart the names msprobe gives the calls it
// records ("Torch.add.0.forward", "Module.encoder.Linear.backward.3",
// "Module.fc.Linear.parameters_grad.0", and the nan-overflow-detection
// skill's "Distributed.all_reduce_0_0"): prefix, api or module path,
// counter and pass. The entries of dump.json, stack.json and
// construct.json are keyed by these names.
//
// Package dump re-exports Name, ParseName and Direction; package sidefile
// uses them to link a backward call to its forward call.
//
// It imports only the standard library.
package dumpname
