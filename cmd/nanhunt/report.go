package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/safeio"

	"github.com/nanhunt/nanhunt/verdict"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/internal/htmlreport"
	"github.com/nanhunt/nanhunt/internal/report"
)

// reportFlags are the flags of nanhunt report.
type reportFlags struct {
	format   string
	output   string
	html     string
	markdown string
	dump     string
}

func reportCommand() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report VERDICT.json",
		Short: "Write a saved verdict as an HTML page or a Markdown summary",
		Long: `report reads a verdict saved by nanhunt trace --format json and writes it
for people:

  --format html      one self-contained page (no network needed to view it):
                     the verdict, a picture of how the anomaly spread over ranks
                     and steps, the origin rank's timeline, the module chain and
                     code, and every list of the verdict
  --format markdown  a compact summary to paste into an issue (the default)
  --format text      the text report of nanhunt trace
  --format skill     the shapes of the nan-overflow-detection skill's scripts

-o FILE writes to a file instead of stdout. --html FILE and --markdown FILE
write those formats to files, and may be given together.

Every report is made from the verdict alone, and is the one nanhunt trace
wrote with it: the verdict holds the origin rank's calls around the root op,
with their statistics and phases. A verdict of an earlier nanhunt, which
does not, shows the origin's own record instead.

Exit status: 0 no anomaly, 1 the verdict holds an anomaly, 2 unusable input
or bad usage, 3 no anomaly in what was read but the verdict is not complete
(some expected rank-step could not be read whole).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, args[0], &f)
		},
	}
	cmd.Flags().StringVar(&f.format, "format", "markdown", "output format: markdown, html, text or skill")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "write to this file instead of stdout")
	cmd.Flags().StringVar(&f.html, "html", "", "write the HTML page to this file")
	cmd.Flags().StringVar(&f.markdown, "markdown", "", "write the Markdown summary to this file")
	// --dump once gave the page the dump to read its timeline from; the
	// verdict holds it now. Still accepted, and still guarded: nothing is
	// written inside it.
	cmd.Flags().StringVar(&f.dump, "dump", "", "not needed: the verdict holds what the reports show of the dump")
	_ = cmd.Flags().MarkHidden("dump")
	return cmd
}

func runReport(cmd *cobra.Command, path string, f *reportFlags) error {
	// a signal waits for the outputs being written: none is left half written
	_, stop := signalContext(cmd.Context())
	defer stop()
	switch f.format {
	case "markdown", "md", "html", "text", "skill":
	default:
		return fmt.Errorf("--format %q: want markdown, html, text or skill", f.format)
	}
	files := f.html != "" || f.markdown != ""
	if files && (f.output != "" || cmd.Flags().Changed("format")) {
		return errors.New("--html and --markdown write files of their own: give them without --format and -o")
	}
	var g outguard.Guard
	g.Input(path)
	g.Dump(f.dump)
	if err := g.Check(out("-o", f.output), out("--html", f.html), out("--markdown", f.markdown)); err != nil {
		return err
	}
	v, err := readVerdict(path)
	if err != nil {
		return err
	}
	if f.dump != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "nanhunt: --dump is not needed: the reports are made from the verdict alone, which holds the origin timeline")
	}
	o := &outputs{stdout: cmd.OutOrStdout()}
	o.file("--html", f.html, func(w io.Writer) error { return htmlReport(w, v) })
	o.file("--markdown", f.markdown, func(w io.Writer) error { return report.Markdown(w, v) })
	if !files {
		writeReport := func(w io.Writer) error {
			switch f.format {
			case "html":
				return htmlReport(w, v)
			case "text":
				return report.Text(w, v)
			case "skill":
				return report.Skill(w, v)
			}
			return report.Markdown(w, v)
		}
		if f.output == "" {
			o.toStdout("the report", writeReport)
		} else {
			o.file("-o", f.output, writeReport)
		}
	}
	setExit(cmd, exitOf(v))
	return o.err()
}

// maxVerdictBytes bounds the verdict file read into memory: a verdict of
// 1,024 ranks and 100 steps is about 1 MiB.
const maxVerdictBytes = 8 << 20

// readVerdict reads a verdict saved with --format json, and checks it.
func readVerdict(path string) (*verdict.Verdict, error) {
	b, err := safeio.ReadFile(path, maxVerdictBytes)
	if err != nil {
		return nil, err
	}
	v, err := verdict.Parse(b)
	if err != nil {
		return nil, &inputError{File: path, Err: fmt.Errorf("%s: %w", path, err)}
	}
	return v, nil
}

// htmlReport writes the verdict as an HTML page, from the verdict alone.
func htmlReport(w io.Writer, v *verdict.Verdict) error {
	return htmlreport.Write(w, v, htmlreport.Options{})
}
