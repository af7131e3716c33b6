package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/internal/export"
	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/report"
)

// exitPartial is the exit status of an export that wrote some files but
// found others damaged or unreadable.
const exitPartial = 1

// exportFlags are the flags of nanhunt export.
type exportFlags struct {
	steps, ranks string
	format       string
	output       string
	jobs         int
	force        bool
}

func exportCommand() *cobra.Command {
	var f exportFlags
	cmd := &cobra.Command{
		Use:   "export DUMP [--format parquet|csv] -o DIR",
		Short: "Write every tensor statistic of a dump to Parquet or CSV files",
		Long: `export writes one row per tensor record of every dump.json (step, rank,
entry, api, direction, field, slot, dtype, shape, numel, max, min, mean, norm,
nonfinite, requires_grad) to Parquet files laid out Hive-style:

  DIR/step=N/rank=R/part-0.parquet      (mode=graph/ or mode=pynative/ above
                                         when the dump has those levels)
  DIR/_nanhunt_export.json              source, columns, counts, warnings

Query them with DuckDB, e.g.
  SELECT step, rank, entry_name FROM read_parquet('DIR/**/*.parquet', hive_partitioning=true)
  WHERE nonfinite <> 'finite' ORDER BY step, entry_index LIMIT 10

--format csv writes the same columns to DIR/step=N/rank=R/part-0.csv instead,
for spreadsheets and for pandas without pyarrow: a header line, fields quoted
as RFC 4180 says, NaN, Infinity and -Infinity spelled so, a null as an empty
field, shape as [4,7,1].

DIR must not be inside the dump, and must be empty or absent unless --force.

Exit status: 0 everything written, 1 some dump.json files damaged or
unreadable (the rows before the damage were written), 2 bad usage or
nothing readable.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd, args[0], &f)
		},
	}
	cmd.Flags().StringVar(&f.steps, "steps", "", "only these steps, e.g. 4-8 or 0,3-7")
	cmd.Flags().StringVar(&f.ranks, "ranks", "", "only these ranks, e.g. 0,3-7")
	cmd.Flags().StringVar(&f.format, "format", "parquet", "output format: parquet or csv")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "output folder (required; absent or empty)")
	cmd.Flags().IntVar(&f.jobs, "jobs", 0, "files converted at once (default: one per CPU, at most 4; about 10 MB each)")
	cmd.Flags().BoolVar(&f.force, "force", false, "write into a non-empty output folder, replacing an earlier export there")
	return cmd
}

// options turns the flags into export.Options.
func (f *exportFlags) options(path string) (export.Options, error) {
	opt := export.Options{Path: path, Out: f.output, Jobs: f.jobs, Force: f.force}
	var err error
	if opt.Format, err = export.ParseFormat(f.format); err != nil || f.format == "" {
		return opt, fmt.Errorf("--format %q: want parquet or csv", f.format)
	}
	if f.output == "" {
		return opt, fmt.Errorf("-o DIR is required")
	}
	opt.Steps, opt.Ranks, err = selection(f.steps, f.ranks)
	return opt, err
}

func runExport(cmd *cobra.Command, path string, f *exportFlags) error {
	if err := checkJobs(cmd, f.jobs); err != nil {
		return err
	}
	if err := checkSelection(cmd, f.steps, f.ranks); err != nil {
		return err
	}
	opt, err := f.options(path)
	if err != nil {
		return err
	}
	var g outguard.Guard
	g.Dump(path)
	if err := g.Check(out("-o", f.output)); err != nil {
		return err
	}
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	s, err := export.Run(ctx, opt)
	if s != nil {
		for _, w := range s.Warnings {
			report.Fprintf(cmd.ErrOrStderr(), "nanhunt: warning: %s\n", w)
		}
	}
	if err != nil {
		return err
	}
	files := "files"
	if s.Written == 1 {
		files = "file"
	}
	kind := "Parquet"
	if s.Format == export.CSV {
		kind = "CSV"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %d %s %s to %s: %d rows from %d entries, %s of dump.json read, %s written\n",
		s.Written, kind, files, s.Out, s.Rows, s.Entries, report.Size(s.BytesRead), report.Size(s.BytesWritten))
	if !s.Complete() {
		fmt.Fprintf(cmd.ErrOrStderr(), "nanhunt: %d of %d dump.json files were damaged or unreadable; the rows before the damage were written, the rest is missing\n",
			s.Damaged, len(s.Files))
		setExit(cmd, exitPartial)
	}
	return nil
}
