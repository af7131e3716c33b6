// Package spec describes a generated run: the Spec (world size, dumped
// steps, model layout, gradient synchronisation, loss scaling, dump level
// and data mode), its on-disk Format variant, the Damage to written files
// and the Fault injected into the simulation, with the kinds of faults.
// Spec.Normalized fills in the defaults and refuses inconsistent specs;
// Random draws a valid small spec for a seed.
//
// Conventions worth knowing: the zero Format writes the current msprobe
// format (indent 1, stack v2, bare NaN, recorded groups, null receive
// buffers, "framework" key) with a fused optimizer whose update is not
// dumped (set OptimizerHooked for the per-parameter Tensor.* update).
//
// It is plain data and imports nothing of the module: the simulation, the
// writer and the truth all read it.
//
// May import: the standard library only.
package spec
