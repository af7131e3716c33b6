package synth

import (
	"context"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/sim"
	"github.com/nanhunt/nanhunt/internal/synth/spec"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// The description of a run (package spec).
type (
	Spec      = spec.Spec
	Model     = spec.Model
	Format    = spec.Format
	Damage    = spec.Damage
	Fault     = spec.Fault
	FaultKind = spec.FaultKind
)

// The model layouts.
const (
	Dense          = spec.Dense
	TensorParallel = spec.TensorParallel
	Pipeline       = spec.Pipeline
	MoE            = spec.MoE
)

// The fault kinds.
const (
	LogNegative             = spec.LogNegative
	ExpOverflow             = spec.ExpOverflow
	SqrtZeroBackward        = spec.SqrtZeroBackward
	CustomAttentionBackward = spec.CustomAttentionBackward
	CastOverflow            = spec.CastOverflow
	MaskedSoftmaxNaN        = spec.MaskedSoftmaxNaN
	OptimizerNaN            = spec.OptimizerNaN
	Uncaptured              = spec.Uncaptured
	AllReduceOverflow       = spec.AllReduceOverflow
	SendRecvCarrier         = spec.SendRecvCarrier
	AllToAllCarrier         = spec.AllToAllCarrier
	GradKernelNaN           = spec.GradKernelNaN
	ReducerZeroCount        = spec.ReducerZeroCount
	ScaledGradOverflow      = spec.ScaledGradOverflow
	GarbageBuffers          = spec.GarbageBuffers
	LegitMasks              = spec.LegitMasks
	GainRunaway             = spec.GainRunaway
	ExpDrift                = spec.ExpDrift
	SharpGradient           = spec.SharpGradient
	WarmupSpike             = spec.WarmupSpike
	HalfTraps               = spec.HalfTraps
)

// What the generator knows happened (package truth).
type (
	Truth     = truth.Truth
	Recovered = truth.Recovered
	OpAt      = truth.OpAt
	Carrier   = truth.Carrier
	Ahead     = truth.Ahead
	Point     = truth.Point
)

// Sidecars asks GenerateWith for the training log and the monitor output
// of the run (package msprobewrite).
type Sidecars = mw.Sidecars

// Generate simulates the run described by s and writes its dump under
// dir (which must be empty or absent): dir/stepN/<rank dir>/{dump,stack,
// construct}.json for every dumped step and dir/synth_truth.json. It
// returns the truth.
func Generate(s Spec, dir string) (*Truth, error) {
	return sim.Generate(s, dir, Sidecars{})
}

// GenerateWith is Generate that also writes the sidecar records side asks
// for. The dump it writes is the same, byte for byte, as Generate's.
func GenerateWith(s Spec, dir string, side Sidecars) (*Truth, error) {
	return sim.Generate(s, dir, side)
}

// GenerateContext is GenerateWith stopped (between steps) when ctx is
// done. When it fails or is stopped, nothing it wrote under dir is left.
func GenerateContext(ctx context.Context, s Spec, dir string, side Sidecars) (*Truth, error) {
	return sim.GenerateContext(ctx, s, dir, side)
}

// Fit returns s with the layers and the micro-batches per step chosen so
// that each dump.json is about s.TargetFileBytes (see sim.Fit). Generate
// calls it first.
func Fit(s Spec) (Spec, error) { return sim.Fit(s) }

// Random returns a small valid spec chosen by seed (see spec.Random).
func Random(seed int64) Spec { return spec.Random(seed) }
