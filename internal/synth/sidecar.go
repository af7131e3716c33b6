package synth

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Sidecars asks GenerateWith for the other records a training run leaves
// next to its msprobe dump, written from the same simulation: the training
// log of the last rank and the output of msprobe's monitor. An empty
// folder is not written. Neither folder may lie inside the dump folder.
type Sidecars struct {
	// LogDir receives train.log: one Megatron-LM training_log line per
	// simulated step (iteration = step + 1), as the last rank prints them.
	LogDir string
	// MonitorDir receives one TrainerMon (v1) folder per rank,
	// <stamp>-rank<r>-<id>/, with one set of CSV files per simulated step:
	// actv_<s>-<s>.csv, grad_unreduced_<s>-<s>.csv, grad_reduced_<s>-<s>.csv
	// and param_updated_<s>-<s>.csv.
	MonitorDir string
	// MonitorOps are the monitor's "ops" in config order, among min, max,
	// mean, norm and nans; empty means norm and nans. With norm alone an
	// Inf shows only as an infinite norm, which a finite tensor whose norm
	// overflows shows too; min and max tell them apart.
	MonitorOps []string
	// LogNaNLoss prints a NaN loss average on the iteration line ("lm loss:
	// NAN", Python's {:.6E} of NaN) and counts every iteration whose loss
	// or grad norm is not finite in "number of nan iterations". By default
	// the line is what training_log prints: it leaves out a loss average
	// that is not above zero (NaN is not), and counts nan iterations only
	// among the iterations the loss scaler skipped, which this simulation
	// (no loss scaler) has none of.
	LogNaNLoss bool
}

// sidecarEpoch is the wall-clock time the simulated run starts at.
var sidecarEpoch = time.Date(2026, time.November, 29, 10, 0, 0, 0, time.UTC)

// GenerateWith is Generate that also writes the sidecar records side asks
// for. The dump it writes is the same, byte for byte, as Generate's.
func GenerateWith(spec Spec, dir string, side Sidecars) (*Truth, error) {
	if err := side.check(dir); err != nil {
		return nil, err
	}
	return generate(spec, dir, side)
}

// check refuses sidecar folders inside the dump folder (or equal to it).
func (sc Sidecars) check(dir string) error {
	if _, err := checkMonitorOps(sc.MonitorOps); err != nil {
		return err
	}
	for _, p := range []struct{ flag, path string }{{"log", sc.LogDir}, {"monitor", sc.MonitorDir}} {
		if p.path == "" {
			continue
		}
		inside, err := within(p.path, dir)
		if err != nil {
			return fmt.Errorf("synth: %s folder: %w", p.flag, err)
		}
		if inside {
			return fmt.Errorf("synth: %s folder %s is inside the dump folder %s", p.flag, p.path, dir)
		}
	}
	return nil
}

// within reports whether path is dir or lies below it.
func within(path, dir string) (bool, error) {
	ap, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	ad, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(ad, ap)
	if err != nil {
		return false, err // refused by the caller: it cannot be placed
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))), nil
}

// sidecar collects what the log and the monitor need from every rank and
// writes them step by step.
type sidecar struct {
	cfg   Sidecars
	spec  *Spec
	log   *megatronLog
	mon   []*monitorRank // per rank, nil without a monitor
	ranks []rankTally    // per rank, reset after every step
}

// rankTally is what one rank contributes to a step's log line.
type rankTally struct {
	losses  int     // micro-batch losses seen (last pipeline stage only)
	lossSum float64 // their sum (NaN and Inf propagate)
	gradSq  float64 // sum of squared reduced gradient norms, replicas divided out
	gradNaN bool
	gradInf bool
	skipped bool    // the loss scaler skipped the update
	scale   float64 // the loss scale after the step (loss scaling only)
}

// newSidecar opens the sidecar outputs of a run.
func newSidecar(w *world, cfg Sidecars) (*sidecar, error) {
	sc := &sidecar{cfg: cfg, spec: w.spec, ranks: make([]rankTally, len(w.ranks))}
	if cfg.LogDir != "" {
		l, err := newMegatronLog(cfg.LogDir, w, cfg.LogNaNLoss)
		if err != nil {
			return nil, err
		}
		sc.log = l
	}
	if cfg.MonitorDir != "" {
		mon, err := newMonitorRanks(cfg.MonitorDir, w.spec, cfg.MonitorOps)
		if err != nil {
			sc.close()
			return nil, err
		}
		sc.mon = mon
	}
	return sc, nil
}

// monitorOf returns the monitor writer of a rank, nil when none.
func (sc *sidecar) monitorOf(rank int) *monitorRank {
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
	rt.losses++
	rt.lossSum += v
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
		m.gradRow(mGradUnreduced, p.name, r.step, g)
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
		rt.scale = r.st.scale
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
			m.gradRow(mGradReduced, p.name, r.step, g)
		}
		switch {
		case g.NaN:
			rt.gradNaN = true
		case g.PInf || g.NInf:
			rt.gradInf = true
		case !g.Empty:
			rt.gradSq += g.Norm * g.Norm / float64(sc.copies(p))
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
	sc.ranks[r.rank].skipped = true
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
		m.gradRow(mParamUpdated, p.name, r.step, p.t)
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
		if err := sc.log.iteration(step, sc.ranks); err != nil {
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
	next := make(chan *monitorRank)
	errs := make([]error, monitorOpenFiles)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range next {
				if err := m.endStep(); err != nil && errs[i] == nil {
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
func (sc *sidecar) close() error {
	if sc == nil || sc.log == nil {
		return nil
	}
	return sc.log.close()
}
