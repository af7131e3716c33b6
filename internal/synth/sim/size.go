package sim

import (
	"errors"
	"math"

	"github.com/nanhunt/nanhunt/internal/synth/spec"
)

// maxLayersPerStage caps the layers Fit gives each pipeline stage: beyond
// it, a larger target adds micro-batches (gradient accumulation) rather
// than layers, as large runs do.
const maxLayersPerStage = 32

// Fit returns sp with the layers and the micro-batches per step chosen
// so that each dump.json is about sp.TargetFileBytes. It leaves sp
// unchanged when TargetFileBytes is not positive or when Layers and
// MicroBatches are both set.
//
// The size of a rank's dump.json for one step is close to a + b·L +
// M·(c + d·L) for L layers and M micro-batches: c + d·L for each forward
// and backward pass, a + b·L for the gradient synchronisation and the
// update. Fit measures both, averaged over the ranks, on two dry runs of
// step 0 with two micro-batches (nothing is written), and solves for what
// is left at zero: Layers as many as fit in one micro-batch (at most 32 per
// pipeline stage, at least enough for the fault's layer), then
// MicroBatches. Generate calls Fit first.
func Fit(sp spec.Spec) (spec.Spec, error) {
	if sp.TargetFileBytes <= 0 || (sp.Layers > 0 && sp.MicroBatches > 0) {
		return sp, nil
	}
	pp := 1
	if sp.Model == spec.Pipeline {
		pp = max(sp.PP, 1)
	}
	minLayers := pp
	if f := sp.Fault; f != nil {
		minLayers = max(minLayers, f.Layer+1)
	}
	// check the rest of the spec with provisional sizes (the most layers
	// Fit may choose, which decide the pipeline stage of the fault's layer)
	p := sp
	if p.Layers == 0 {
		p.Layers = max(pp*maxLayersPerStage, minLayers)
	}
	p.MicroBatches = max(sp.MicroBatches, 1)
	if sp.Fault != nil {
		f := *sp.Fault
		f.MicroBatch = 0
		p.Fault = &f
	}
	n, err := p.Normalized()
	if err != nil {
		return sp, err
	}
	c := *n
	c.Fault, c.Damage, c.Steps, c.MicroBatches = nil, nil, []int{0}, 2
	c.Schedule = "sequential" // the bytes do not depend on the order of the passes
	// measure returns the mean bytes per pass and per step outside the
	// passes for L layers
	measure := func(layers int) (pass, rest float64, err error) {
		c.Layers = layers
		w := newWorld(&c)
		w.dry = true
		if err := w.runStep(0, true, ""); err != nil {
			return 0, 0, err
		}
		var total, second int64
		for _, st := range w.ranks {
			total += st.dumpBytes
			second += st.passEnds[1] - st.passEnds[0]
		}
		k := float64(len(w.ranks))
		pass = float64(second) / k
		return pass, float64(total)/k - 2*pass, nil
	}
	l1, l2 := pp, 2*pp
	u1, v1, err := measure(l1)
	if err != nil {
		return sp, err
	}
	u2, v2, err := measure(l2)
	if err != nil {
		return sp, err
	}
	d := (u2 - u1) / float64(l2-l1)
	cc := u1 - d*float64(l1)
	b := (v2 - v1) / float64(l2-l1)
	a := v1 - b*float64(l1)
	size := func(layers, mbs int) float64 {
		l := float64(layers)
		return a + b*l + float64(mbs)*(cc+d*l)
	}
	target := float64(sp.TargetFileBytes)
	out := sp
	switch {
	case sp.Layers == 0 && sp.MicroBatches == 0:
		k := 1
		for k < maxLayersPerStage && size(pp*(k+1), 1) <= target {
			k++
		}
		out.Layers = max(pp*k, minLayers)
		out.MicroBatches = max(1, int(math.Round((target-size(out.Layers, 0))/(cc+d*float64(out.Layers)))))
	case sp.Layers == 0:
		m := float64(sp.MicroBatches)
		l := (target - a - m*cc) / (b + m*d)
		if math.IsNaN(l) || l < 1 {
			l = 1
		}
		out.Layers = max(int(math.Round(l)), minLayers)
	default:
		out.MicroBatches = max(1, int(math.Round((target-size(sp.Layers, 0))/(cc+d*float64(sp.Layers)))))
	}
	if out.Layers > 1<<20 || out.MicroBatches > 1<<20 {
		return sp, errors.New("synth: target file size needs more than a million layers or micro-batches")
	}
	return out, nil
}
