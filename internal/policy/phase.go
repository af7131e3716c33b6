package policy

import (
	"strings"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/sidefile"
)

// Phase is the part of a training step a call ran in.
type Phase uint8

// The phases of a step, in the order a step runs them.
const (
	PhaseUnknown Phase = iota
	Forward
	Backward
	Reduction // the gradient reduction after the backward
	Optimizer // the update, and gradient clipping
)

var phaseNames = [...]string{"", "forward", "backward", "gradient reduction", "optimizer"}

// String is the phase's name in the verdict: "forward", "backward",
// "gradient reduction" or "optimizer".
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return ""
}

// Stage is the phase in the verdict's three words: the gradient reduction
// is part of the backward.
func (p Phase) Stage() string {
	switch p {
	case Forward:
		return "forward"
	case Backward, Reduction:
		return "backward"
	case Optimizer:
		return "optimizer"
	}
	return ""
}

// ParentPhase is what a construct.json parent says of a call's phase: the
// pseudo-parents "optimizer" and "clip_grad" (msprobe's hooks on
// optimizer.step and clip_grad_norm_) place it in the optimizer, a backward
// module call ("Module.x.Linear.backward.0") in the backward. ok is false
// when the parent says nothing.
func ParentPhase(parent string) (Phase, bool) {
	switch {
	case OptimizerParent(parent):
		return Optimizer, true
	case parent == "":
		return PhaseUnknown, false
	}
	if n := dump.ParseName(parent); n.Module && n.Dir == notation.Backward {
		return Backward, true
	}
	return PhaseUnknown, false
}

// OptimizerParent reports whether a construct.json parent places its call
// in the optimizer (see ParentPhase).
func OptimizerParent(parent string) bool { return parent == "optimizer" || parent == "clip_grad" }

// OptimizerStack reports whether a call's stack places it in the
// optimizer (see Frames).
func OptimizerStack(frames []sidefile.Frame) bool { return ReadFrames(frames).Optimizer }

// Frames is what a call's own stack (stack.json, innermost frame first)
// says of its phase.
type Frames struct {
	// Checkpoint: a frame in torch/utils/checkpoint: activation
	// checkpointing ran the call, in the block's first forward or, with a
	// frame of a function named backward too, as a recompute inside the
	// backward (whose phase is the backward).
	Checkpoint bool
	// Optimizer: optimizer code, a file under a folder named optim,
	// optimizer or optimizers (torch/optim, megatron/core/optimizer,
	// apex/optimizers), a function whose name starts with clip_grad, or a
	// line that calls .step( (optimizer.step(), scaler.step(optimizer)).
	Optimizer bool
	// Backward: a function named backward (a torch.autograd.Function's
	// backward that autograd calls back, loss.backward() on the calling
	// thread). This places a kernel that register_custom_api names
	// "P.kernel.N.forward" but that a backward calls.
	Backward bool
}

// ReadFrames reads what a stack says of its call's phase.
func ReadFrames(frames []sidefile.Frame) Frames {
	var f Frames
	for _, fr := range frames {
		p := slashed(fr.File)
		f.Checkpoint = f.Checkpoint || strings.Contains(p, "/torch/utils/checkpoint")
		f.Optimizer = f.Optimizer || isOptimizerFrame(fr, p)
		f.Backward = f.Backward || fr.Func == "backward"
	}
	return f
}

func isOptimizerFrame(f sidefile.Frame, p string) bool {
	if strings.HasPrefix(f.Func, "clip_grad") {
		return true
	}
	for _, dir := range []string{"/optim/", "/optimizer/", "/optimizers/"} {
		if strings.Contains(p, dir) {
			return true
		}
	}
	return strings.Contains(f.Source, ".step(")
}

func slashed(p string) string { return strings.ReplaceAll(p, "\\", "/") }
