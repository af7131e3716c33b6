package sim

import (
	"errors"
	"math"
	"sync"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/spec"
)

// sidecar collects what the log and the monitor need from every rank and
// writes them step by step.
type sidecar struct {
	cfg   mw.Sidecars
	spec  *spec.Spec
	log   *mw.TrainLog
	mon   []*mw.Monitor  // per rank, nil without a monitor
	ranks []mw.StepTally // per rank, reset after every step
	// stepMillis is the typical elapsed time per iteration
	stepMillis float64
}

// newSidecar opens the sidecar outputs of a run.
func newSidecar(w *world, cfg mw.Sidecars) (*sidecar, error) {
	s := w.spec
	sc := &sidecar{cfg: cfg, spec: s, ranks: make([]mw.StepTally, len(w.ranks))}
	sc.stepMillis = 180 + 35*float64(s.Layers*s.MicroBatches)*math.Sqrt(float64(s.Hidden*s.Seq*s.Batch)/2048)
	if cfg.LogDir != "" {
		lr := adamLR
		if s.Optimizer == "sgd" {
			lr = sgdLR
		}
		var last []bool
		for _, st := range w.ranks {
			last = append(last, st.model.last)
		}
		l, err := mw.NewTrainLog(cfg.LogDir, s, last, lr, cfg.LogNaNLoss)
		if err != nil {
			return nil, err
		}
		sc.log = l
	}
	if cfg.MonitorDir != "" {
		mon, err := mw.NewMonitors(cfg.MonitorDir, s.Ranks, s.Seed, cfg.MonitorOps)
		if err != nil {
			sc.close()
			return nil, err
		}
		sc.mon = mon
	}
	return sc, nil
}

// iterationMillis is the elapsed time of a step's iteration.
func (sc *sidecar) iterationMillis(step int) float64 {
	g := newGen(uint64(sc.spec.Seed), uint64(step), 0x109)
	ms := sc.stepMillis * (1 + 0.03*g.n())
	if step == 0 {
		ms *= 3.2 // the first iteration compiles and allocates
	}
	return math.Max(ms, 1)
}

// monitorOf returns the monitor writer of a rank, nil when none.
func (sc *sidecar) monitorOf(rank int) *mw.Monitor {
	if sc == nil || sc.mon == nil {
		return nil
	}
	return sc.mon[rank]
}

// loss records one micro-batch loss of a rank on the last pipeline stage.
func (sc *sidecar) loss(rank int, t *tensor) {
	if sc == nil || t == nil {
		return
	}
	v := t.Mean
	switch {
	case t.NaN || (t.PInf && t.NInf):
		v = math.NaN()
	case t.PInf:
		v = math.Inf(1)
	case t.NInf:
		v = math.Inf(-1)
	}
	rt := &sc.ranks[rank]
	rt.Losses++
	rt.LossSum += v
}

// unreduced records a rank's accumulated gradients before the data
// parallel all_reduce.
func (sc *sidecar) unreduced(r *rk, grads map[*param]*tensor) {
	m := sc.monitorOf(r.rank)
	if m == nil {
		return
	}
	for _, p := range r.st.model.params {
		if p.from > r.step {
			continue
		}
		g := grads[p]
		if g == nil {
			g = zeros(p.t.Shape, p.t.DT)
		}
		m.Row(mw.GradUnreduced, p.name, r.step, g.Written())
	}
}

// reduced records a rank's gradients after the all_reduce and averaging:
// in the monitor, and as the rank's share of the global gradient norm.
func (sc *sidecar) reduced(r *rk, gs *gradSet) {
	if sc == nil {
		return
	}
	m := sc.monitorOf(r.rank)
	rt := &sc.ranks[r.rank]
	if sc.spec.LossScale {
		rt.Scale = r.st.scale
	}
	for _, p := range r.st.model.params {
		if p.from > r.step {
			continue
		}
		g := gs.p[p]
		if g == nil {
			continue
		}
		if m != nil {
			m.Row(mw.GradReduced, p.name, r.step, g.Written())
		}
		switch {
		case g.NaN:
			rt.GradNaN = true
		case g.PInf || g.NInf:
			rt.GradInf = true
		case !g.Empty:
			rt.GradSq += g.Norm * g.Norm / float64(sc.copies(p))
		}
	}
}

// copies is how many ranks hold the same shard of p: its data-parallel
// replicas, times the tensor-parallel ranks for a parameter that tensor
// parallelism does not split. The global norm counts each shard once.
func (sc *sidecar) copies(p *param) int {
	n := 1
	if p.sync != nil {
		n = p.sync.size()
	}
	if sc.spec.TP > 1 && !tpSplit(p) {
		n *= sc.spec.TP
	}
	return n
}

// tpSplit reports a parameter that tensor parallelism shards.
func tpSplit(p *param) bool {
	if p.key == "rel_bias" {
		return true
	}
	switch p.module.class {
	case "ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding":
		return true
	}
	return false
}

// skippedStep records that the loss scaler skipped a rank's update.
func (sc *sidecar) skippedStep(r *rk) {
	if sc == nil {
		return
	}
	sc.ranks[r.rank].Skipped = true
}

// updated records a rank's parameters after the optimizer step.
func (sc *sidecar) updated(r *rk) {
	m := sc.monitorOf(r.rank)
	if m == nil {
		return
	}
	for _, p := range r.st.model.params {
		if p.from > r.step {
			continue
		}
		m.Row(mw.ParamUpdated, p.name, r.step, p.t.Written())
	}
}

// endStep writes what every rank recorded in a step and resets the
// tallies; it runs after all the ranks finished the step.
func (sc *sidecar) endStep(step int) error {
	if sc == nil {
		return nil
	}
	var errs []error
	if err := sc.flushMonitor(); err != nil {
		errs = append(errs, err)
	}
	if sc.log != nil {
		if err := sc.log.Iteration(step, sc.iterationMillis(step), sc.ranks); err != nil {
			errs = append(errs, err)
		}
	}
	clear(sc.ranks)
	return errors.Join(errs...)
}

// flushMonitor writes the rows the ranks still hold, a few ranks at a
// time (file creation is slow on some file systems; the writes overlap).
func (sc *sidecar) flushMonitor() error {
	if len(sc.mon) == 0 {
		return nil
	}
	next := make(chan *mw.Monitor)
	errs := make([]error, mw.MonitorOpenFiles)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range next {
				if err := m.EndStep(); err != nil && errs[i] == nil {
					errs[i] = err
				}
			}
		}()
	}
	for _, m := range sc.mon {
		next <- m
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// close finishes the outputs; it returns the first error.
// remove deletes what the sidecar wrote: the training log and the
// monitor's rank folders (each of them made by it: the log is created
// exclusively, the folders one by one).
func (sc *sidecar) remove() {
	if sc.log != nil {
		sc.log.Remove()
	}
	for _, m := range sc.mon {
		m.Remove()
	}
}

func (sc *sidecar) close() error {
	if sc == nil || sc.log == nil {
		return nil
	}
	return sc.log.Close()
}
