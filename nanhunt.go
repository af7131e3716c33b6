package nanhunt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nanhunt/nanhunt/internal/evidence"
	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/sources"
	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// Inputs is what Run reads and how. At least one of Dump, Summaries, Log
// and Monitor must be given (or Verdict, with Log or Monitor).
type Inputs struct {
	// Dump is an msprobe dump_path (step0/ step1/ …), a step folder, a
	// rank folder or one dump.json. With Summaries or Verdict it is only
	// where the plan measures the tensors to collect.
	Dump string
	// Summaries are summary files that "nanhunt summarize" wrote on the
	// nodes of a run, joined into the verdict the rank folders give in
	// one place; they are read instead of Dump.
	Summaries []string
	// Verdict, when set, is a verdict made before (verdict.Parse): it is
	// not analysed again, only joined with Log and Monitor and planned
	// with Plan. Run changes it and returns it.
	Verdict *verdict.Verdict

	// Steps and Ranks restrict the analysis to these steps and ranks (the
	// sets dump.ParseRanges returns); nil means all.
	Steps, Ranks map[int]bool
	// WorldSize, when set, is the job's number of ranks: each of 0 to
	// WorldSize-1 (among Ranks) is expected at every step analysed, as a
	// rank with a folder is, so that a rank with no folder at all is
	// unread rather than unseen (at most MaxWorldSize; 0: the ranks the
	// dump and its collectives show).
	WorldSize int
	// RulesFile is a JSON file of extra exclusion rules (op, side, slot,
	// values, reason); "" for none.
	RulesFile string
	// Jobs bounds the dump files read at once (0: one per CPU).
	Jobs int
	// Strict reports the first anomaly even when the next dumped step no
	// longer shows it (an overflow the loss scaler skipped).
	Strict bool
	// Timeline adds the calls around the root op (origin.timeline, which
	// the HTML page shows) and what they explain (a call that hid the
	// value), at the cost of one more read of the origin rank's dump.json:
	// ask for it when a page is written now or later from the saved
	// verdict, or when people read the answer.
	Timeline bool

	// Log names the training logs, Monitor the msprobe monitor output.
	Log     LogInputs
	Monitor MonitorInputs
	// Plan shapes the follow-up: where it dumps, its mode and budget.
	Plan PlanOptions
	// Progress, when set, receives a snapshot of the dump's reading about
	// five times a second, and a last one (Final set) at its end.
	Progress func(Progress)
}

// LogInputs names training logs (Megatron-LM, DeepSpeed, JSON lines, or
// any format through Patterns) and how to read them.
type LogInputs struct {
	// Paths are files or globs ("logs/rank*.log"); a glob that matches
	// nothing is read as given, so that the error names the missing file.
	Paths []string
	// Format is "auto" (or ""), "megatron", "deepspeed", "json" or
	// "generic".
	Format string
	// Patterns are "step=REGEX", "loss=REGEX" or "grad_norm=REGEX" (key
	// names in JSON logs), for the generic format.
	Patterns []string
	// StepOffset, when set, is added to a log's iteration to give the dump
	// step (nil: -1 for Megatron-LM and DeepSpeed, which count from 1; 0
	// for JSON and generic logs).
	StepOffset *int
}

// MonitorInputs names the msprobe monitor output and how to read it.
type MonitorInputs struct {
	// Dir is the monitor output folder (MONITOR_OUTPUT_DIR) or one rank's
	// folder.
	Dir string
	// TPSize, above 1, is the tensor-parallel size: the monitor compares a
	// module across the ranks of its group (consecutive ranks).
	TPSize int
}

// PlanOptions shape the plan of what to collect next (verdict.Plan).
type PlanOptions struct {
	// DumpPath is the dump_path written into the msprobe config.json
	// (default "./nanhunt_followup"); ConfigPath where the config will be
	// saved, for the Python lines that load it (default "./config.json").
	DumpPath, ConfigPath string
	// Mode is "any-step", "same-step" or "" (any-step when its estimate
	// fits Budget, or cannot be made).
	Mode string
	// Budget bounds the size of an any-step tensor dump of the whole run,
	// in bytes (0: 50 GB).
	Budget int64
}

// Progress is a snapshot of the dump's reading.
type Progress struct {
	Step      int   // the step being read
	StepsDone int   // steps finished
	Steps     int   // steps that may be read (the scan usually stops earlier)
	FilesDone int   // dump.json files finished
	Files     int   // dump.json files that may be read
	BytesRead int64 // bytes read so far (a file may be read twice: searched, then parsed)
	Bytes     int64 // total size of the files that may be read
	Elapsed   time.Duration
	Final     bool // the last snapshot
}

// ErrNothingToRead is Run's error when Inputs names nothing to read.
var ErrNothingToRead = errors.New("nothing to read: give a dump, summaries, training logs or a monitor folder")

// InputError is an error about one input file that the caller named (the
// rules file); the message names it too.
type InputError struct {
	File string
	Err  error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Run reads the inputs, analyses the dump, joins the evidence of the logs
// and the monitor, and plans what to collect next. The dump (or the
// summaries), the logs and the monitor output are read at once; ctx's end,
// or the first of them to fail, stops them all. Damaged or missing files
// of the dump are the verdict's warnings; Run fails when nothing usable
// can be read, when an option does not parse, or with ctx's error.
func Run(ctx context.Context, in Inputs) (*verdict.Verdict, error) {
	side := sources.Inputs{Log: sources.Log(in.Log), Monitor: sources.Monitor(in.Monitor)}
	analyse := in.Verdict == nil && (in.Dump != "" || len(in.Summaries) > 0)
	if !analyse && !side.Given() && in.Verdict == nil {
		return nil, ErrNothingToRead
	}
	if err := side.Check(); err != nil {
		return nil, err
	}
	var opt trace.Options
	if analyse {
		var err error
		if opt, err = in.traceOptions(); err != nil {
			return nil, err
		}
	}
	popt := in.planOptions()
	if popt.Measure != nil {
		sz := newSizing(popt.Measure)
		popt.Measure, opt.Decided = sz.Measure, sz.decided
	}
	g, gctx := errgroup.WithContext(ctx)
	v := in.Verdict
	if analyse {
		g.Go(func() error {
			var err error
			v, err = trace.Run(gctx, opt)
			return err
		})
	}
	said := side.Start(gctx, g)
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch {
	case side.Given():
		if analyse {
			v.Plan = plan.Make(v, popt)
		}
		return said.Combine(v, popt), nil // which plans again with the evidence
	case analyse:
		v.Plan = plan.Make(v, popt)
	default:
		v.Plan = planOf(v, popt)
	}
	return v, nil
}

// traceOptions are the dump analysis's options.
func (in Inputs) traceOptions() (trace.Options, error) {
	opt := trace.Options{Path: in.Dump, Steps: in.Steps, Ranks: in.Ranks, Jobs: in.Jobs, Strict: in.Strict, Summaries: in.Summaries, Timeline: in.Timeline}
	if len(in.Summaries) > 0 {
		opt.Path = ""
	}
	var err error
	if opt.Expected, err = worldRanks(in.WorldSize); err != nil {
		return opt, err
	}
	if opt.Rules, err = loadRules(in.RulesFile); err != nil {
		return opt, err
	}
	if in.Progress != nil {
		progress := in.Progress
		opt.Progress = func(p trace.Progress) { progress(Progress(p)) }
	}
	return opt, nil
}

// loadRules reads a rules file (nil when none is named): the one reading
// of the rules, for Run, Watch and Summarize. A file that cannot be read
// or does not parse is an *InputError naming it.
func loadRules(file string) ([]policy.Rule, error) {
	if file == "" {
		return nil, nil
	}
	rules, err := policy.LoadRules(file)
	if err != nil {
		return nil, &InputError{File: file, Err: err}
	}
	return rules, nil
}

// planOptions are the plan's options, sized from the summaries or from
// the dump's shapes.
func (in Inputs) planOptions() plan.Options {
	return planOptions(in.Plan, in.Dump, in.Summaries)
}

// planOptions are the options of a plan shaped by p and sized from the
// summaries when there are some, else from the dump's shapes: the one
// sizing of a plan, for Run and Watch.
func planOptions(p PlanOptions, dump string, summaries []string) plan.Options {
	popt := plan.Options{DumpPath: p.DumpPath, ConfigPath: p.ConfigPath, Mode: p.Mode, Budget: p.Budget}
	switch {
	case len(summaries) > 0:
		sizes := trace.SummarySizes(summaries)
		popt.Measure = func(step, rank int, apis []string) (plan.Sizes, error) {
			by, file, err := sizes(step, rank, apis)
			return plan.Sum(file, by), err
		}
	case dump != "":
		popt.Measure = plan.FromDump(dump)
	}
	return popt
}

// planOf is the plan of a verdict made before, with popt: with the
// evidence it holds, the plan Combine makes of it (on a copy: v keeps its
// next steps), else the dump's.
func planOf(v *verdict.Verdict, popt plan.Options) *verdict.Plan {
	if v.Evidence != nil {
		cp := *v
		cp.NextSteps = slices.Clip(v.NextSteps)
		return evidence.Combine(&cp, v.Evidence.Log, v.Evidence.Monitor, popt).Plan
	}
	return plan.Make(v, popt)
}

// MaxWorldSize bounds Inputs.WorldSize and WatchInputs.WorldSize.
const MaxWorldSize = 1 << 20

// worldRanks are the ranks 0 to n-1 of a world of n (none for 0).
func worldRanks(n int) ([]int, error) {
	if n < 0 || n > MaxWorldSize {
		return nil, fmt.Errorf("world size %d: a job has 1 to %d ranks", n, MaxWorldSize)
	}
	ranks := make([]int, n)
	for r := range ranks {
		ranks[r] = r
	}
	return ranks, nil
}
