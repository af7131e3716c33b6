package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/synth"
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
a real dump.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			if _, err := synth.Generate(synth.Demo(), dir); err != nil {
				return fmt.Errorf("generate the demo run: %w", err)
			}
			if f.format == "text" {
				fmt.Fprintf(cmd.ErrOrStderr(), "nanhunt demo: wrote a 32-rank MoE run to %s in %.1fs; tracing it.\n\n", dir, time.Since(start).Seconds())
			}
			return runTrace(cmd, dir, &f)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&keep, "keep", "", "write the run to this folder and keep it (must not exist)")
	return cmd
}

func synthCommand() *cobra.Command {
	var scenario, out string
	var list bool
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Write a generated msprobe-format run with a known fault",
		Long: `synth writes a realistic msprobe-format run (dump_path/stepN/rankM/...) with a
known injected fault, and the truth (synth_truth.json) next to the steps.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				fmt.Fprintf(cmd.OutOrStdout(), "%-32s %s\n", "demo", "the built-in 32-rank MoE example (nanhunt demo)")
				for _, s := range synth.Scenarios() {
					fmt.Fprintf(cmd.OutOrStdout(), "%-32s %s\n", s.Name, s.Description)
				}
				return nil
			}
			if out == "" {
				return fmt.Errorf("-o DIR is required (a folder that does not exist yet)")
			}
			spec, ok := scenarioSpec(scenario)
			if !ok {
				return fmt.Errorf("no scenario %q (see nanhunt synth --list)", scenario)
			}
			truth, err := synth.Generate(spec, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (scenario %s, anomaly %v)\n", out, scenario, truth.Anomaly)
			return nil
		},
	}
	cmd.Flags().StringVar(&scenario, "scenario", "demo", "scenario name (see --list)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "folder to write the run to")
	cmd.Flags().BoolVar(&list, "list", false, "list the scenarios")
	return cmd
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
