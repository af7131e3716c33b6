package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/internal/synth"
)

// runFlags describe a generated run of any size (nanhunt synth without
// --scenario).
type runFlags struct {
	worldSize    int
	steps        string
	model        string
	fileMB       float64
	layers       int
	microBatches int
	tp, pp, ep   int
	level        string
	dataMode     string
	seed         int64
	fault        string
	faultStep    int
	faultRanks   string
	faultLayer   int
	faultMB      int
}

func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.worldSize, "world-size", 8, "world size: the number of ranks of the run")
	fl.StringVar(&f.steps, "steps", "0-5", "dumped steps, e.g. 0-5 or 0,2,4-7 (the simulation runs from step 0)")
	fl.StringVar(&f.model, "model", "dense", "model layout: dense, tp (tensor parallel), pp (pipeline) or moe")
	fl.Float64Var(&f.fileMB, "file-mb", 16, "target size of each dump.json in MB (0: no target, use --layers and --micro-batches)")
	fl.IntVar(&f.layers, "layers", 0, "transformer layers (0: as many as fit --file-mb, at most 32 per pipeline stage)")
	fl.IntVar(&f.microBatches, "micro-batches", 0, "forward and backward passes per step (0: as many as fit --file-mb)")
	fl.IntVar(&f.tp, "tp-size", 2, "tensor-parallel group size (--model tp)")
	fl.IntVar(&f.pp, "pp-size", 2, "pipeline stages (--model pp)")
	fl.IntVar(&f.ep, "ep-size", 0, "expert-parallel group size (--model moe; 0: the largest of 8, 4, 2, 1 that divides --world-size)")
	fl.StringVar(&f.level, "level", "L1", "dump level: L1 or mix")
	fl.StringVar(&f.dataMode, "data-mode", "all", "msprobe data_mode: all, or forward (no backward and no parameters_grad entries)")
	fl.Int64Var(&f.seed, "seed", 1, "random seed")
	fl.StringVar(&f.fault, "fault", "exp-overflow", "fault kind (see --list), or none for a clean run")
	fl.IntVar(&f.faultStep, "fault-step", -1, "step of the fault (-1: the second-to-last dumped step)")
	fl.StringVar(&f.faultRanks, "fault-ranks", "", "ranks of the fault, e.g. 2,5 (default: one rank of the first pipeline stage)")
	fl.IntVar(&f.faultLayer, "fault-layer", 0, "layer of the fault, for kinds that live in a layer")
	fl.IntVar(&f.faultMB, "fault-micro-batch", 0, "micro-batch of the fault (-1: the last)")
	// --tp-size is trace's name for the tensor-parallel size too
	addAlias(cmd, "tp", "tp-size")
	addAlias(cmd, "pp", "pp-size")
	addAlias(cmd, "ep", "ep-size")
	// a rank list everywhere else: never taken as a size
	addRefused(cmd, "ranks", "world-size", "the world size is --world-size N now; --ranks is a list of ranks in the other commands, "+
		"and the ranks of synth's fault are --fault-ranks")
}

// runFlagNames are the flags that describe a run of any size.
var runFlagNames = []string{"world-size", "steps", "model", "file-mb", "layers", "micro-batches", "tp-size", "pp-size", "ep-size",
	"level", "data-mode", "seed", "fault", "fault-step", "fault-ranks", "fault-layer", "fault-micro-batch"}

// spec builds the Spec the flags describe.
func (f *runFlags) spec() (synth.Spec, error) {
	s := synth.Spec{Ranks: f.worldSize, Level: f.level, DataMode: f.dataMode, Seed: f.seed, Layers: f.layers, MicroBatches: f.microBatches,
		Hidden: 4096, Batch: 1, Seq: 4096, Vocab: 32000, LossLog: true}
	if f.worldSize <= 0 {
		return s, errors.New("--world-size must be positive")
	}
	steps, err := parseList("--steps", f.steps)
	if err != nil {
		return s, err
	}
	s.Steps = steps
	switch f.model {
	case "dense":
		s.Model = synth.Dense
	case "tp":
		s.Model, s.TP = synth.TensorParallel, f.tp
	case "pp":
		s.Model, s.PP = synth.Pipeline, f.pp
	case "moe":
		s.Model, s.EP = synth.MoE, f.ep
		if s.EP <= 0 {
			s.EP = 1
			for _, e := range []int{8, 4, 2} {
				if f.worldSize%e == 0 {
					s.EP = e
					break
				}
			}
		}
		s.Experts = 2 * s.EP
	default:
		return s, fmt.Errorf("--model %q: want dense, tp, pp or moe", f.model)
	}
	if f.fileMB < 0 {
		return s, errors.New("--file-mb must not be negative")
	}
	s.TargetFileBytes = int64(f.fileMB * 1e6)
	s.Name = fmt.Sprintf("%s-%dr", f.model, f.worldSize)
	if f.fault != "none" {
		kind, ok := faultKind(f.fault)
		if !ok {
			return s, fmt.Errorf("--fault %q: unknown kind (see nanhunt synth --list)", f.fault)
		}
		fault := &synth.Fault{Kind: kind, Step: f.faultStep, Layer: f.faultLayer, MicroBatch: f.faultMB}
		if fault.Step < 0 {
			fault.Step = steps[max(len(steps)-2, 0)]
		}
		if f.faultRanks != "" {
			if fault.Ranks, err = parseList("--fault-ranks", f.faultRanks); err != nil {
				return s, err
			}
		} else if kind != synth.OptimizerNaN && kind != synth.AllReduceOverflow {
			stage := f.worldSize
			if s.Model == synth.Pipeline && s.PP > 0 {
				stage = f.worldSize / s.PP
			}
			fault.Ranks = []int{stage / 2}
		}
		s.Fault = fault
		s.Name += "-" + f.fault
	}
	return s, nil
}

// faultKind finds a fault kind by name.
func faultKind(name string) (synth.FaultKind, bool) {
	for k := synth.LogNegative; k <= synth.LegitMasks; k++ {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}

// parseList parses "0-5" or "0,2,4-7" into a sorted list.
func parseList(flag, s string) ([]int, error) {
	set, err := parseRanges(flag, s)
	if err != nil {
		return nil, err
	}
	var l []int
	for n := range set {
		l = append(l, n)
	}
	if len(l) == 0 {
		return nil, fmt.Errorf("%s: empty list", flag)
	}
	slices.Sort(l)
	return l, nil
}

func synthCommand() *cobra.Command {
	var scenario, out string
	var list bool
	var side synth.Sidecars
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Write a generated msprobe-format run with a known fault",
		Long: `synth writes a realistic msprobe-format run (dump_path/stepN/rankM/...) with a
known injected fault, and the truth (synth_truth.json) next to the steps.

With --scenario it writes one of the catalogued runs (--list). Otherwise the
run is built from the flags: world size, dumped steps, model layout, the size
of each dump.json (the generator adds layers, up to 32 per pipeline stage, then
micro-batches per step, i.e. gradient accumulation, until each file is about
--file-mb), and the fault. What was written is reported on stderr.

--log-dir and --monitor-dir also write, from the same simulation, the
Megatron-LM training log of the last rank (DIR/train.log, one line per
simulated step) and the msprobe monitor (TrainerMon) output of every rank
(DIR/<time>-rank<N>-<id>/*.csv, one set of files per step). Both folders
must lie outside -o.

  nanhunt synth --world-size 8 --steps 0-5 --model dense --file-mb 128 \
      --fault exp-overflow --fault-step 5 --fault-ranks 3 -o /data/run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				listScenarios(cmd.OutOrStdout())
				return nil
			}
			if out == "" {
				return errors.New("-o DIR is required (a folder that does not exist yet)")
			}
			custom := slices.ContainsFunc(runFlagNames, func(n string) bool { return cmd.Flags().Changed(n) })
			if custom && cmd.Flags().Changed("scenario") {
				return errors.New("--scenario cannot be combined with the flags that describe a run")
			}
			var spec synth.Spec
			if custom {
				var err error
				if spec, err = rf.spec(); err != nil {
					return err
				}
			} else {
				var ok bool
				if spec, ok = scenarioSpec(scenario); !ok {
					return fmt.Errorf("no scenario %q (see nanhunt synth --list)", scenario)
				}
			}
			// the generator allocates at a high rate and keeps little:
			// unless the environment says otherwise, collect less often,
			// within a soft limit of 2 GiB
			if os.Getenv("GOGC") == "" {
				defer debug.SetGCPercent(debug.SetGCPercent(400))
			}
			if os.Getenv("GOMEMLIMIT") == "" {
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(2 << 30))
			}
			fitted, err := synth.Fit(spec)
			if err != nil {
				return err
			}
			start := time.Now()
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			truth, err := synth.GenerateContext(ctx, fitted, out, side)
			if err != nil {
				return err
			}
			secs := time.Since(start).Seconds()
			describeRun(cmd.ErrOrStderr(), &fitted, truth, out, measureDir(out), secs)
			describeSidecars(cmd.ErrOrStderr(), side)
			if !custom {
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (scenario %s, anomaly %v)\n", out, scenario, truth.Anomaly)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&scenario, "scenario", "demo", "scenario name (see --list)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "folder to write the run to")
	cmd.Flags().BoolVar(&list, "list", false, "list the scenarios and fault kinds")
	cmd.Flags().StringVar(&side.LogDir, "log-dir", "", "also write the Megatron-LM training log of the run to DIR/train.log")
	cmd.Flags().StringVar(&side.MonitorDir, "monitor-dir", "", "also write the msprobe monitor (TrainerMon) output of every rank under DIR")
	cmd.Flags().StringSliceVar(&side.MonitorOps, "monitor-ops", nil, "monitor statistics in config order, among min, max, mean, norm, nans (default norm,nans)")
	cmd.Flags().BoolVar(&side.LogNaNLoss, "log-nan-loss", false, "print a NaN loss as \"lm loss: NAN\" and count non-finite iterations as nan iterations (training_log leaves a NaN loss out)")
	rf.register(cmd)
	return cmd
}

func listScenarios(w io.Writer) {
	fmt.Fprintf(w, "%-32s %s\n", "demo", "the built-in 32-rank MoE example (nanhunt demo)")
	for _, s := range synth.Scenarios() {
		fmt.Fprintf(w, "%-32s %s\n", s.Name, s.Description)
	}
	var kinds []string
	for k := synth.LogNegative; k <= synth.LegitMasks; k++ {
		kinds = append(kinds, k.String())
	}
	fmt.Fprintf(w, "\nfault kinds for --fault: %s, none\n", strings.Join(kinds, ", "))
}

// written is what a generated run holds on disk.
type written struct {
	files, dumps     int
	bytes, dumpBytes int64
}

// measureDir counts the files and bytes under dir.
func measureDir(dir string) written {
	var w written
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		w.files++
		w.bytes += fi.Size()
		if d.Name() == "dump.json" {
			w.dumps++
			w.dumpBytes += fi.Size()
		}
		return nil
	})
	return w
}

// describeRun tells on w what was written.
func describeRun(w io.Writer, s *synth.Spec, t *synth.Truth, dir string, wr written, secs float64) {
	mb := float64(wr.bytes) / 1e6
	fmt.Fprintf(w, "nanhunt synth: wrote %d files, %.1f MB in %.2fs (%.0f MB/s) to %s\n", wr.files, mb, secs, mb/secs, dir)
	per := 0.0
	if wr.dumps > 0 {
		per = float64(wr.dumpBytes) / float64(wr.dumps) / 1e6
	}
	layers := s.Layers
	if layers == 0 {
		layers = 2 // synth's default
	}
	passes := "1 micro-batch"
	if s.MicroBatches > 1 {
		passes = fmt.Sprintf("%d micro-batches", s.MicroBatches)
	}
	fmt.Fprintf(w, "  %s, %d ranks, %d dumped steps, %d layers, %s per step, %.1f MB per dump.json on average\n",
		s.Model, s.Ranks, len(s.Steps), layers, passes, per)
	if !t.Anomaly {
		fmt.Fprintf(w, "  truth: no anomaly\n")
		return
	}
	fmt.Fprintf(w, "  truth: %s born at step %d on rank(s) %v in %s (%s)\n", t.Kind, t.Step, t.Ranks, t.Op, t.Stage)
}

// describeSidecars tells on w where the training log and the monitor
// output went.
func describeSidecars(w io.Writer, side synth.Sidecars) {
	if side.LogDir != "" {
		fmt.Fprintf(w, "  training log: %s\n", filepath.Join(side.LogDir, "train.log"))
	}
	if side.MonitorDir != "" {
		fmt.Fprintf(w, "  monitor output: %s\n", side.MonitorDir)
	}
}

func scenarioSpec(name string) (synth.Spec, bool) {
	if name == "demo" {
		return synth.Demo(), true
	}
	for _, s := range synth.Scenarios() {
		if s.Name == name {
			return s.Spec, true
		}
	}
	return synth.Spec{}, false
}
