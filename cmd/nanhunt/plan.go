package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/internal/report"
)

type planFlags struct {
	traceFlags
	verdict    string
	dumpPath   string
	configPath string
	mode       string
	budget     string
}

func planCommand() *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan [DUMP]",
		Short: "Say what to collect next, and write the msprobe config.json for it",
		Long: `plan analyses DUMP (or reads a verdict saved by "nanhunt trace --format json")
and says what to collect next:

  - the origin was captured: a "tensor" dump of the calls around the root op,
    for "nanhunt repro". By default (any-step) on every step and every rank,
    with a "nanhunt watch --exit-on-anomaly" that ends the re-run at the
    first lasting anomaly, since a random NaN rarely comes back at the same
    step; when that would exceed --budget, or with --mode same-step, only the
    origin step on the origin rank(s) and one clean rank;
  - the origin was not captured: a dump of every call at that step, with the
    Python lines that register the uncovered user functions;
  - only a training log or monitor output: the steps and ranks to dump.

The plan is printed; -o writes its config.json (never inside the dump).

Exit status: 0 no anomaly (nothing to collect), 1 a plan for an anomaly, 2
unusable input or bad usage, 3 no anomaly in what could be read but some
expected rank-step could not be read whole.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := f.inputs(args) // a dump, or the summaries of its nodes
			if err != nil {
				return err
			}
			return runPlan(cmd, path, &f)
		},
	}
	f.registerAnalysis(cmd)
	f.evidence.register(cmd)
	cmd.Flags().StringVar(&f.verdict, "verdict", "", "read this saved JSON verdict instead of analysing a dump")
	cmd.Flags().StringVar(&f.dumpPath, "config-dump-path", "./nanhunt_followup", "the dump_path written into the config: where msprobe writes the next dump")
	cmd.Flags().StringVar(&f.configPath, "config-path", "./config.json", "where the config will be saved, for the Python lines that load it")
	cmd.Flags().StringVar(&f.format, "format", "text", "output format: text or json (the plan as JSON)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "write the config.json to this file")
	cmd.Flags().StringVar(&f.mode, "mode", "", "any-step (every step and rank: a NaN that moves) or same-step (this anomaly's steps and ranks); default: any-step when it fits --budget")
	cmd.Flags().StringVar(&f.budget, "budget", "50GB", "the size an any-step tensor dump of the run may take (e.g. 500GB, 2TB)")
	// --dump names the dump read (report), never where the next one goes
	addAlias(cmd, "dump-path", "config-dump-path")
	return cmd
}

func runPlan(cmd *cobra.Command, path string, f *planFlags) error {
	// a signal waits for the outputs being written: none is left half written
	_, stop := signalContext(cmd.Context())
	defer stop()
	if err := f.check(cmd, "text", "json"); err != nil {
		return err
	}
	if err := f.guard(path, out("-o", f.output)); err != nil {
		return err
	}
	switch f.mode {
	case "", plan.AnyStep, plan.SameStep:
	default:
		return fmt.Errorf("--mode %q: want any-step or same-step", f.mode)
	}
	budget, err := parseBytes(f.budget)
	if err != nil {
		return fmt.Errorf("--budget: %w", err)
	}
	in, err := f.analysis(cmd, path)
	if err != nil {
		return err
	}
	in.Plan = nanhunt.PlanOptions{DumpPath: f.dumpPath, ConfigPath: f.configPath, Mode: f.mode, Budget: budget}
	if f.verdict != "" {
		if in.Verdict, err = readVerdict(f.verdict); err != nil {
			return err
		}
	}
	v, err := analyse(cmd, in)
	if err != nil {
		return err
	}
	// the config first: standard output holds one plan or one error
	if f.output != "" && v.Plan != nil {
		cfg, err := v.Plan.Config.Indented()
		if err != nil {
			return err
		}
		if err := writeOut(f.output, cmd.OutOrStdout(), func(w io.Writer) error { _, err := w.Write(cfg); return err }); err != nil {
			return err
		}
	}
	if err := writePlan(cmd.OutOrStdout(), f.format, v); err != nil {
		return err
	}
	if f.output != "" && f.output != "-" && v.Plan != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "nanhunt: wrote %s\n", f.output)
	}
	if v.Plan != nil {
		setExit(cmd, exitAnomaly)
	} else {
		setExit(cmd, exitOf(v))
	}
	return nil
}

// guard refuses a config path that is one of the inputs or lies inside
// the dump.
func (f *planFlags) guard(path string, outs ...outguard.Output) error {
	var g outguard.Guard
	g.Dump(path)
	g.Input(f.rules, f.verdict)
	f.evidence.guard(&g)
	return g.Check(outs...)
}

func writePlan(w io.Writer, format string, v *verdict.Verdict) error {
	if format == "json" {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(v.Plan)
	}
	if v.Plan == nil && !v.Anomaly && !v.Complete && len(v.Unread) > 0 {
		_, err := fmt.Fprintf(w, "nanhunt: no anomaly to chase in what could be read, but %s could not be read whole: copy those files whole, or dump those steps again, then plan from them.\n",
			ranklist.UnreadWords(v.Unread))
		return err
	}
	if v.Plan == nil {
		_, err := fmt.Fprintln(w, "nanhunt: nothing to collect: the verdict has no anomaly to chase.")
		return err
	}
	return report.Plan(w, v)
}
