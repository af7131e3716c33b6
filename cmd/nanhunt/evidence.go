package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/nanhunt/nanhunt/internal/evidence"
	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/nanhunt/nanhunt/internal/monitor"
	"github.com/nanhunt/nanhunt/internal/trainlog"
)

// evidenceFlags name the training logs and the monitor output.
type evidenceFlags struct {
	logs     []string
	patterns []string
	format   string
	offset   string
	monitor  string
	tpSize   int
}

func (f *evidenceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.logs, "log", nil, "training log file, or a glob such as 'logs/rank*.log' (repeatable)")
	cmd.Flags().StringVar(&f.format, "log-format", "auto", "log format: auto, megatron, deepspeed, json or generic")
	cmd.Flags().StringArrayVar(&f.patterns, "log-pattern", nil, "generic format: step=REGEX, loss=REGEX or grad_norm=REGEX (key names in JSON logs); repeatable")
	cmd.Flags().StringVar(&f.offset, "log-step-offset", "", "dump step = log iteration + this (default -1 for Megatron-LM and DeepSpeed, which count from 1; 0 for JSON and generic logs)")
	cmd.Flags().StringVar(&f.monitor, "monitor", "", "msprobe monitor output folder (MONITOR_OUTPUT_DIR, or one rank's folder)")
	cmd.Flags().IntVar(&f.tpSize, "tp-size", 0, "tensor-parallel size: the monitor compares a module across the ranks of its group (consecutive ranks)")
}

func (f *evidenceFlags) given() bool { return len(f.logs) > 0 || f.monitor != "" }

// evidenceRead is what --log and --monitor gave (nil when not given).
type evidenceRead struct {
	log     *trainlog.Log
	monitor *monitor.Run
}

// read starts reading the training logs and the monitor output on g, each
// stopping when ctx is done; the result is complete once g.Wait returns
// nil.
func (f *evidenceFlags) read(ctx context.Context, g *errgroup.Group) *evidenceRead {
	ev := &evidenceRead{}
	if len(f.logs) > 0 {
		g.Go(func() error {
			l, err := f.readLogs(ctx)
			ev.log = l
			return err
		})
	}
	if f.monitor != "" {
		opt := monitor.Options{}
		if f.tpSize > 1 {
			opt.Groups = monitor.TPGroups(worldOf(f.monitorRanks()), f.tpSize)
		}
		g.Go(func() error {
			run, err := monitor.Read(ctx, f.monitor, opt)
			ev.monitor = run
			return err
		})
	}
	return ev
}

// combine joins the evidence read with the dump's verdict (nil without a
// dump).
func (f *evidenceFlags) combine(v *verdict.Verdict, ev *evidenceRead, popt plan.Options) *verdict.Verdict {
	if !f.given() {
		return v
	}
	var le *verdict.LogEvidence
	var me *verdict.MonitorEvidence
	var warnings []verdict.Warning
	if l := ev.log; l != nil {
		le = evidence.FromLog(l)
		for _, w := range l.Warnings {
			warnings = append(warnings, verdict.Warning{File: w.File, Message: fmt.Sprintf("line %d: %s", w.Line, w.Message)})
		}
	}
	if run := ev.monitor; run != nil {
		me = evidence.FromMonitor(run)
		for _, w := range run.Findings().Warnings {
			warnings = append(warnings, verdict.Warning{File: w.File, Message: fmt.Sprintf("line %d: %s", w.Line, w.Message)})
		}
	}
	v = evidence.Combine(v, le, me, popt)
	v.Warnings = append(v.Warnings, warnings...)
	return v
}

// readLogs expands globs and reads the logs with the user's format,
// patterns and step offset, until ctx is done.
func (f *evidenceFlags) readLogs(ctx context.Context) (*trainlog.Log, error) {
	opt := trainlog.Options{Format: f.format}
	for _, p := range f.patterns {
		name, expr, err := trainlog.ParsePattern(p)
		if err != nil {
			return nil, fmt.Errorf("--log-pattern: %w", err)
		}
		if err := opt.Patterns.Set(name, expr); err != nil {
			return nil, fmt.Errorf("--log-pattern: %w", err)
		}
	}
	if f.offset != "" {
		n, err := strconv.Atoi(f.offset)
		if err != nil {
			return nil, fmt.Errorf("--log-step-offset %q: want an integer such as -1", f.offset)
		}
		opt.StepOffset = &n
	}
	return trainlog.Read(ctx, f.logPaths(), opt)
}

// logPaths expands the globs of --log; a pattern that matches nothing is
// read as given, so that a missing file is reported by name.
func (f *evidenceFlags) logPaths() []string {
	var paths []string
	for _, l := range f.logs {
		matches, err := filepath.Glob(l)
		if err != nil || len(matches) == 0 {
			paths = append(paths, l)
			continue
		}
		paths = append(paths, matches...)
	}
	return paths
}

// guard adds the logs and the monitor output to the inputs g protects.
func (f *evidenceFlags) guard(g *outguard.Guard) {
	g.Input(f.logPaths()...)
	g.InputTree(f.monitor)
}

var rankInName = regexp.MustCompile(`rank[_-]?(\d+)`)

// monitorRanks lists the ranks of the monitor's rank folders, by name.
func (f *evidenceFlags) monitorRanks() []int {
	ents, err := os.ReadDir(f.monitor)
	if err != nil {
		return nil
	}
	var ranks []int
	for _, e := range ents {
		if m := rankInName.FindStringSubmatch(e.Name()); m != nil && e.IsDir() {
			if r, err := strconv.Atoi(m[1]); err == nil {
				ranks = append(ranks, r)
			}
		}
	}
	return ranks
}

// worldOf is the world size the rank folders imply.
func worldOf(ranks []int) int {
	n := 0
	for _, r := range ranks {
		n = max(n, r+1)
	}
	return n
}
