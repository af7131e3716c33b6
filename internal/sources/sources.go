package sources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/nanhunt/nanhunt/internal/ahead"
	"github.com/nanhunt/nanhunt/internal/evidence"
	"github.com/nanhunt/nanhunt/internal/monitor"
	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/internal/trainlog"
	"github.com/nanhunt/nanhunt/verdict"
)

// Log names the training logs and how to read them.
type Log struct {
	// Paths are files or globs ("logs/rank*.log"); a glob that matches
	// nothing is read as given, so that a missing file is named.
	Paths []string
	// Format is "auto" (or ""), "megatron", "deepspeed", "json" or
	// "generic".
	Format string
	// Patterns are "step=REGEX", "loss=REGEX" or "grad_norm=REGEX" (key
	// names in JSON logs), for the generic format.
	Patterns []string
	// StepOffset, when set, is added to a log's iteration to give the dump
	// step (nil: the format's default).
	StepOffset *int
}

// Monitor names the monitor output folder and how to read it.
type Monitor struct {
	// Dir is the monitor output folder, or one rank's folder.
	Dir string
	// TPSize, above 1, is the tensor-parallel size: a module is compared
	// across the ranks of its group (consecutive ranks).
	TPSize int
}

// Inputs are the sources beside the dump; either may be empty.
type Inputs struct {
	Log     Log
	Monitor Monitor
}

// Given reports whether any source is named.
func (in Inputs) Given() bool { return len(in.Log.Paths) > 0 || in.Monitor.Dir != "" }

// Check refuses options that cannot be read before anything is: a pattern
// that does not parse.
func (in Inputs) Check() error {
	_, err := in.Log.options()
	return err
}

// Files are the log files the paths name, globs expanded.
func (l Log) Files() []string {
	var paths []string
	for _, p := range l.Paths {
		matches, err := filepath.Glob(p)
		if err != nil || len(matches) == 0 {
			paths = append(paths, p)
			continue
		}
		paths = append(paths, matches...)
	}
	return paths
}

func (l Log) options() (trainlog.Options, error) {
	opt := trainlog.Options{Format: l.Format, StepOffset: l.StepOffset, Ahead: ahead.LogJudge}
	for _, p := range l.Patterns {
		name, expr, err := trainlog.ParsePattern(p)
		if err != nil {
			return opt, fmt.Errorf("log pattern: %w", err)
		}
		if err := opt.Patterns.Set(name, expr); err != nil {
			return opt, fmt.Errorf("log pattern: %w", err)
		}
	}
	return opt, nil
}

// Read reads the logs until ctx is done.
func (l Log) Read(ctx context.Context) (*trainlog.Log, error) {
	opt, err := l.options()
	if err != nil {
		return nil, err
	}
	return trainlog.Read(ctx, l.Files(), opt)
}

// Read reads the monitor output until ctx is done.
func (m Monitor) Read(ctx context.Context) (*monitor.Run, error) {
	opt := monitor.Options{Ahead: ahead.MonitorJudge}
	if m.TPSize > 1 {
		opt.Groups = monitor.TPGroups(worldOf(m.ranks()), m.TPSize)
	}
	return monitor.Read(ctx, m.Dir, opt)
}

var rankInName = regexp.MustCompile(`rank[_-]?(\d+)`)

// ranks lists the ranks of the monitor's rank folders, by name.
func (m Monitor) ranks() []int {
	ents, err := os.ReadDir(m.Dir)
	if err != nil {
		return nil
	}
	var ranks []int
	for _, e := range ents {
		if sub := rankInName.FindStringSubmatch(e.Name()); sub != nil && e.IsDir() {
			if r, err := strconv.Atoi(sub[1]); err == nil {
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

// Said is what the sources said (nil for one not named). It is whole once
// the group Start ran on has returned nil from Wait.
type Said struct {
	inputs  Inputs
	Log     *trainlog.Log
	Monitor *monitor.Run
}

// Start reads the sources named on g, each stopping when ctx is done.
func (in Inputs) Start(ctx context.Context, g *errgroup.Group) *Said {
	said := &Said{inputs: in}
	if len(in.Log.Paths) > 0 {
		g.Go(func() error {
			l, err := in.Log.Read(ctx)
			said.Log = l
			return err
		})
	}
	if in.Monitor.Dir != "" {
		g.Go(func() error {
			run, err := in.Monitor.Read(ctx)
			said.Monitor = run
			return err
		})
	}
	return said
}

// Combine joins what the sources said with the dump's verdict (nil
// without a dump): their evidence, the plan they call for, their
// warnings, and what they warn of before the NaN (added to v.Ahead).
// Without a source named it returns v as it is.
func (s *Said) Combine(v *verdict.Verdict, popt plan.Options) *verdict.Verdict {
	if s == nil || !s.inputs.Given() {
		return v
	}
	var le *verdict.LogEvidence
	var me *verdict.MonitorEvidence
	var warnings []verdict.Warning
	var ahead []Ahead
	if s.Log != nil {
		le = evidence.FromLog(s.Log)
		warnings = append(warnings, logWarnings(s.Log)...)
		ahead = append(ahead, logAhead(s.Log))
	}
	if s.Monitor != nil {
		me = evidence.FromMonitor(s.Monitor)
		warnings = append(warnings, monitorWarnings(s.Monitor)...)
		ahead = append(ahead, monitorAhead(s.Monitor))
	}
	v = evidence.Combine(v, le, me, popt)
	v.Warnings = append(v.Warnings, warnings...)
	addAhead(v, ahead...)
	return v
}

// logWarnings are a log's warnings as the verdict lists them.
func logWarnings(l *trainlog.Log) []verdict.Warning {
	var out []verdict.Warning
	for _, w := range l.Warnings {
		out = append(out, verdict.Warning{File: w.File, Message: fmt.Sprintf("line %d: %s", w.Line, w.Message)})
	}
	return out
}

// monitorWarnings are the monitor's warnings as the verdict lists them.
func monitorWarnings(run *monitor.Run) []verdict.Warning {
	var out []verdict.Warning
	for _, w := range run.Findings().Warnings {
		out = append(out, verdict.Warning{File: w.File, Message: fmt.Sprintf("line %d: %s", w.Line, w.Message)})
	}
	return out
}
