package msprobewrite

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Sidecars asks the generator for the other records a training run leaves
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

// epoch is the wall-clock time the simulated run starts at.
var epoch = time.Date(2026, time.November, 29, 10, 0, 0, 0, time.UTC)

// Check refuses unknown monitor ops and sidecar folders inside the dump
// folder dir (or equal to it).
func (sc Sidecars) Check(dir string) error {
	if _, err := CheckMonitorOps(sc.MonitorOps); err != nil {
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

// StepTally is what one rank contributes to a step's log line.
type StepTally struct {
	Losses  int     // micro-batch losses seen (last pipeline stage only)
	LossSum float64 // their sum (NaN and Inf propagate)
	GradSq  float64 // sum of squared reduced gradient norms, replicas divided out
	GradNaN bool
	GradInf bool
	Skipped bool    // the loss scaler skipped the update
	Scale   float64 // the loss scale after the step (loss scaling only)
}
