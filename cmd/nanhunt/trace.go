package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/report"
	"github.com/nanhunt/nanhunt/internal/trace"
)

// traceFlags are the flags that shape an analysis and its output.
type traceFlags struct {
	steps, ranks string
	worldSize    int
	format       string
	output       string
	rules        string
	jobs         int
	strict       bool
	html         string
	timeline     bool
	evidence     evidenceFlags
	summaries    []string // node summaries to join instead of a dump
	detailSteps  bool
}

func (f *traceFlags) register(cmd *cobra.Command) {
	f.registerAnalysis(cmd)
	cmd.Flags().StringVar(&f.format, "format", "text", "output format: text, json (the stable verdict), markdown (a summary for an issue tracker) or skill (the nan-overflow-detection skill's shapes)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "write the verdict to this file instead of stdout")
	cmd.Flags().BoolVar(&f.timeline, "timeline", false, "read the origin rank's dump.json once more for the calls around the root op (origin.timeline) and a call that hid the value (a hidden explanation); --html, text and markdown output imply it, json and skill skip it unless asked")
	f.evidence.register(cmd)
}

// registerAnalysis adds the flags that shape the analysis itself.
func (f *traceFlags) registerAnalysis(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.steps, "steps", "", "only these steps, e.g. 4-8 or 0,3-7")
	cmd.Flags().StringVar(&f.ranks, "ranks", "", "only these ranks, e.g. 0,3-7")
	cmd.Flags().IntVar(&f.worldSize, "world-size", 0, "the job's number of ranks: every rank 0 to N-1 is expected at every step, a rank with no folder is unread (default: the ranks the dump shows)")
	cmd.Flags().StringVar(&f.rules, "rules", "", "JSON file of extra exclusion rules (op, side, slot, values, reason)")
	cmd.Flags().IntVar(&f.jobs, "jobs", 0, "files read at once (default: one per CPU)")
	cmd.Flags().BoolVar(&f.strict, "strict", false, "report the first NaN/Inf even when the next step no longer shows it")
}

// analysis is the flags as the library's Inputs; path names the dump (or
// the first of the summaries).
func (f *traceFlags) analysis(cmd *cobra.Command, path string) (nanhunt.Inputs, error) {
	in := nanhunt.Inputs{Dump: path, Summaries: f.summaries, RulesFile: f.rules, Jobs: f.jobs, Strict: f.strict, Timeline: f.rereadOrigin(), WorldSize: f.worldSize}
	var err error
	if in.Steps, in.Ranks, err = selection(f.steps, f.ranks); err != nil {
		return in, err
	}
	if in.Log, in.Monitor, err = f.evidence.inputs(); err != nil {
		return in, err
	}
	if path != "" && f.format == "text" {
		in.Progress = progressTo(cmd.ErrOrStderr())
	}
	return in, nil
}

// rereadOrigin says whether the origin rank's dump.json is read once more
// for the calls around the root op (origin.timeline) and what they explain
// (a call that hid the value): for a page, for the formats people read,
// and when asked; a JSON or skill verdict for a machine skips that read
// unless --timeline asks for it.
func (f *traceFlags) rereadOrigin() bool {
	return f.timeline || f.html != "" || f.format == "text" || f.format == "markdown"
}

// verdictFormats are the --format values of trace and demo.
var verdictFormats = []string{"text", "json", "markdown", "skill"}

// check refuses flag values that parse but mean nothing, before anything
// is read; formats are those the command writes.
func (f *traceFlags) check(cmd *cobra.Command, formats ...string) error {
	if err := checkFormat(f.format, formats...); err != nil {
		return err
	}
	if err := checkJobs(cmd, f.jobs); err != nil {
		return err
	}
	if f.worldSize < 0 || f.worldSize > nanhunt.MaxWorldSize || cmd.Flags().Changed("world-size") && f.worldSize == 0 {
		return fmt.Errorf("--world-size %d: a job has 1 to %d ranks", f.worldSize, nanhunt.MaxWorldSize)
	}
	return checkSelection(cmd, f.steps, f.ranks)
}

func traceCommand() *cobra.Command {
	var f traceFlags
	cmd := &cobra.Command{
		Use:   "trace [DUMP | SUMMARY... | DIR_OF_SUMMARIES] [--log FILE...] [--monitor DIR]",
		Short: "Find the origin of the first NaN/Inf in a dump, a training log or monitor output",
		Long: `trace reads an msprobe dump and prints where the first NaN/Inf was born.

DUMP is a dump_path (step0/ step1/ ...), a step folder (rank0/ rank1/ ...),
a rank folder, or a dump.json. It may also be the summaries that
"nanhunt summarize" wrote on each node (files, or the folder holding them):
they are joined into the verdict the rank folders give in one place.

--log (training logs: Megatron-LM, DeepSpeed, or any format through
--log-pattern) and --monitor (msprobe monitor output) add their evidence:
the verdict says where they agree with the dump and where they do not.
Without a dump, they say which steps and ranks to dump, and print the
msprobe config.json for it.

Exit status: 0 no anomaly and every expected rank-step read whole, 1 anomaly
found, 2 unusable input or bad usage, 3 no anomaly in what could be read but
some expected rank-step could not be read whole (the first line names it).`,
		Example: `  nanhunt trace ./dump_path
  nanhunt trace ./dump_path/step6 --ranks 0-7
  nanhunt trace ./dump_path --format json -o verdict.json --html report.html
  nanhunt trace ./dump_path --log 'logs/rank*.log' --monitor ./monitor_output
  nanhunt trace --log train.log              # no dump yet: what to dump
  nanhunt trace /shared/summaries/           # join the summaries of every node`,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := f.inputs(args)
			if err != nil {
				return err
			}
			return runTrace(cmd, path, &f)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&f.detailSteps, "detail-steps", false, "with summaries made by summarize --until-first: print the steps to summarise again with details (for --steps), and stop")
	cmd.Flags().StringVar(&f.html, "html", "", "also write the report as one offline HTML page to this file")
	return cmd
}

func runTrace(cmd *cobra.Command, path string, f *traceFlags) error {
	if err := f.check(cmd, verdictFormats...); err != nil {
		return err
	}
	if err := f.guard(path, out("-o", f.output), out("--html", f.html)); err != nil {
		return err
	}
	in, err := f.analysis(cmd, path)
	if err != nil {
		return err
	}
	v, err := analyse(cmd, in)
	if err != nil {
		return err
	}
	if f.detailSteps {
		fmt.Fprintln(cmd.OutOrStdout(), detailSteps(v))
		return nil
	}
	// each output on its own: a failed --html loses no verdict
	o := &outputs{stdout: cmd.OutOrStdout()}
	o.file("--html", f.html, func(w io.Writer) error { return htmlReport(w, v) })
	writeVerdict := func(w io.Writer) error { return write(w, f.format, v) }
	if f.output == "" {
		o.toStdout("the verdict", writeVerdict)
	} else {
		o.file("-o", f.output, writeVerdict)
	}
	setExit(cmd, exitOf(v))
	return o.err()
}

// guard refuses outputs that are one of the inputs or lie inside the dump.
func (f *traceFlags) guard(path string, outs ...outguard.Output) error {
	var g outguard.Guard
	if len(f.summaries) > 0 {
		g.Input(f.summaries...)
	} else {
		g.Dump(path)
	}
	g.Input(f.rules)
	f.evidence.guard(&g)
	return g.Check(outs...)
}

// analyse runs the library on in until Ctrl-C.
func analyse(cmd *cobra.Command, in nanhunt.Inputs) (*verdict.Verdict, error) {
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	v, err := nanhunt.Run(ctx, in)
	if errors.Is(err, nanhunt.ErrNothingToRead) {
		return nil, fmt.Errorf("nothing to read: give a dump folder, --log FILE or --monitor DIR")
	}
	return v, err
}

func write(w io.Writer, format string, v *verdict.Verdict) error {
	switch format {
	case "json":
		return report.JSON(w, v)
	case "markdown":
		return report.Markdown(w, v)
	case "skill":
		return report.Skill(w, v)
	}
	return report.Text(w, v)
}

// inputs reads trace's arguments: one dump, or summaries (files, or
// folders of them). It returns the path that names the input.
func (f *traceFlags) inputs(args []string) (string, error) {
	switch {
	case len(args) == 0:
		return "", nil
	case len(args) == 1 && !trace.IsSummary(args[0]) && !summaryFolder(args[0]):
		return args[0], nil
	}
	for _, a := range args {
		if _, err := os.Stat(a); err != nil {
			return "", err
		}
		if !trace.IsSummary(a) && !summaryFolder(a) {
			return "", fmt.Errorf("%s: not a nanhunt summary: give one dump, or only summaries", a)
		}
	}
	files, err := trace.SummaryFiles(args)
	if err != nil {
		return "", err
	}
	f.summaries = files
	return args[0], nil
}

// summaryFolder reports whether dir is a folder of summaries and not a
// dump.
func summaryFolder(dir string) bool {
	files, err := trace.SummaryFiles([]string{dir})
	if err != nil || len(files) == 0 {
		return false
	}
	for _, f := range files {
		if !trace.IsSummary(f) {
			return false
		}
	}
	return true
}

// detailSteps are the steps whose details a verdict from summaries needs:
// the origin's step and the next dumped step.
func detailSteps(v *verdict.Verdict) string {
	if v == nil || v.Origin == nil {
		return ""
	}
	steps := []int{v.Origin.Step}
	for _, st := range v.Steps {
		if st.Step > v.Origin.Step {
			steps = append(steps, st.Step)
			break
		}
	}
	return notation.FormatRanges(steps)
}
