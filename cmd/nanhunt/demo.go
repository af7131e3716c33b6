package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/internal/synth"
)

func demoCommand() *cobra.Command {
	var f traceFlags
	var keep string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Generate the built-in example run and trace it",
		Long: `demo writes a realistic 32-rank mixture-of-experts run to a temporary folder
(the loss shows NaN only at step 8; the first NaN is at step 6, born in a
custom attention kernel's backward on ranks 3 and 7 at once, spread to the
other ranks by the gradient all_reduce) and traces it, as "nanhunt trace" would
a real dump. The folder is deleted when the demo ends; --keep DIR writes the
run to DIR instead and leaves it there, to run the other commands on it.
--html FILE also writes the report of the verdict as one offline HTML page.

The run has an anomaly on purpose, so the demo exits 1, as "nanhunt trace"
does on a dump with a NaN/Inf ("go run" then adds its own "exit status 1").
Exit status: 1 the demo's verdict (an anomaly), 2 bad usage or an error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.check(cmd, verdictFormats...); err != nil {
				return err
			}
			// refused before the run is written: an output inside --keep
			if err := f.guard(keep, out("-o", f.output), out("--html", f.html)); err != nil {
				return err
			}
			dir := keep
			if dir == "" {
				tmp, err := os.MkdirTemp("", "nanhunt-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				dir = filepath.Join(tmp, "dump")
			}
			start := time.Now()
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			if _, err := synth.GenerateContext(ctx, synth.Demo(), dir, synth.Sidecars{}); err != nil {
				return fmt.Errorf("generate the demo run: %w", err)
			}
			if f.format == "text" {
				fmt.Fprintf(cmd.ErrOrStderr(), "nanhunt demo: wrote a 32-rank MoE run to %s in %.1fs; tracing it.\n\n", dir, time.Since(start).Seconds())
			}
			return runTrace(cmd, dir, &f)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&keep, "keep", "", "write the run to this folder and keep it (must not exist); without it the run is deleted when the demo ends")
	cmd.Flags().StringVar(&f.html, "html", "", "also write the report of the demo's verdict as one offline HTML page to this file")
	return cmd
}
