// Package trainlog reads training logs and says which iteration first
// printed a non-finite loss or grad norm, so that a caller can tell which
// msprobe stepN folder to look at first.
//
// Three kinds of log are understood, detected per file:
//
//   - Megatron-LM iteration lines (" iteration 9/ 100 | ... | lm loss:
//     7.1E+00 | ... | grad norm: nan | number of skipped iterations: 0 |
//     number of nan iterations: 0 |");
//   - DeepSpeed lines: the fp16 loss-scale overflow messages ("OVERFLOW!
//     Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
//     "Grad overflow on iteration 4", ...), the engine's progress line
//     ("[Rank 0] step=10, skipped=2, lr=[...], mom=[...]"), the pipeline
//     engine's "steps: 10 loss: 2.3456 ..." and HF-Trainer-style dict lines
//     ("{'loss': 2.345, 'grad_norm': nan, ...}");
//   - JSON and JSON Lines files (the first non-space byte is '{' or '['),
//     where records are the objects holding a step key, and any other text
//     file through user patterns (see [Patterns]).
//
// Non-finite values are read in every spelling Python prints (nan, NaN,
// -nan, NAN, inf, -inf, INF, Infinity, -Infinity) and as the bare JSON
// tokens NaN, Infinity and -Infinity. A huge finite value such as
// 1.000000E+38 stays finite.
//
// # Iterations and steps
//
// A log numbers its iterations its own way; msprobe numbers its stepN
// folders from 0. Each record carries both the Iteration as printed and the
// Step in msprobe's numbering, Step = Iteration + Mapping.Offset. The
// default offsets are:
//
//   - Megatron-LM: -1. training.py increments iteration before it calls
//     training_log, so the first step prints "iteration 1".
//   - DeepSpeed: -1. The engine prints "step={global_steps + 1}" before it
//     increments global_steps, the pipeline engine prints "steps:
//     {global_steps}" after, so both print 1 for the first step. "Grad
//     overflow on iteration N" prints the optimizer's own counter, which
//     starts at 0: it is read as iteration N+1.
//   - JSON and generic text: 0 (the value of the step key as written).
//
// Options.StepOffset overrides the offset for every file.
//
// # Skipped iterations
//
// An iteration skipped by the fp16 loss scaler (Megatron's "number of
// skipped iterations: N" with N > 0, DeepSpeed's OVERFLOW lines) is a
// [Skip], not a first non-finite value: a scaled gradient that overflows
// is expected and the step is not applied. Two cases are values that stay
// non-finite instead, which the scaler cannot skip away: a skipped
// iteration whose printed loss is not finite (the forward made it), and a
// run of skips that does not end — three or more in a row after the rank
// printed a finite step, two or more ending at its last printed iteration,
// or eight or more from the start of the log (a few skips at the start are
// the scaler searching its initial scale). The first iteration of such a
// run is [Summary.PersistentSkips] and counts as a non-finite grad norm.
//
// A DeepSpeed OVERFLOW line does not say which step it belongs to. It is
// taken as the step after the last step counter seen for its rank (from its
// own "step=", "steps:" or Megatron iteration lines, else from any such
// line of the file), and the overflow itself advances the rank's count.
// This is exact when every step prints a progress line (steps_per_print 1,
// detected from two consecutive progress lines); otherwise the Skip is
// marked Approximate. "Grad overflow on iteration N" is always exact. The
// messages DeepSpeed prints about one overflow ("Grad overflow on
// iteration", "Reducing dynamic loss scale", "... Skipping step") are merged
// when they are at most three lines apart with no progress line between;
// the same message twice on one rank is two overflows. A rise of the
// "skipped=" counter with no overflow message is a skip too.
//
// An HF-Trainer dict line prints no step either: it takes the last step
// counter of its rank (or of the file), else its own count of dict lines,
// and is marked Inferred. A non-finite value printed at an iteration that
// some rank of the same file skipped (the HF Trainer logs the inf grad norm
// of an overflowed step) is part of the skip, not a first non-finite value.
//
// # Memory
//
// Files are streamed line by line (or token by token for JSON) with bounded
// memory: a line longer than 64 KiB is cut (JSON Lines: 4 MiB) with a
// warning, and .gz files are decompressed on the fly. Every record that is
// not plainly finite (non-finite, skipped, naming non-finite parameters or
// leaving out its loss) is kept, up to 100000 per file; of the plainly
// finite ones only the first Options.KeepFinite per file are kept. The
// [Summary] does not depend on what is kept: it is computed while reading.
//
// Damaged input (truncated files, garbage, giant lines, numbers too large
// to hold) never stops a read: it becomes a [Warning] naming the file and
// line. A cancelled context does: the file being read stops at its next
// read of the disk and Read returns the context's error. Nothing is ever
// written.
//
// It imports internal/climb (the series followed for a warning before the
// NaN), internal/jsonlex, internal/safeio and nonfinite.
//
// May import: internal/climb, internal/jsonlex, internal/nonfinite,
// internal/safeio.
package trainlog
