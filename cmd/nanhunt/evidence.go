package main

import (
	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/trace"
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
	cmd.Flags().StringArrayVar(&f.logs, "log", nil, "training log file (repeat, or a glob, for one file per rank)")
	cmd.Flags().StringVar(&f.format, "log-format", "auto", "log format: auto, megatron, deepspeed, json or generic")
	cmd.Flags().StringArrayVar(&f.patterns, "log-pattern", nil, "pattern for the generic format: step=REGEX, loss=REGEX or grad_norm=REGEX (key names for JSON logs)")
	cmd.Flags().StringVar(&f.offset, "log-step-offset", "", "dump step = log iteration + this (default: -1 for Megatron, which counts from 1; 0 otherwise)")
	cmd.Flags().StringVar(&f.monitor, "monitor", "", "msprobe monitor output folder (MONITOR_OUTPUT_DIR)")
	cmd.Flags().IntVar(&f.tpSize, "tp-size", 0, "tensor-parallel size, to compare the monitor's tensor-parallel partners (consecutive ranks)")
}

func (f *evidenceFlags) given() bool { return len(f.logs) > 0 || f.monitor != "" }

// combine reads the evidence and joins it with the dump's verdict (nil
// without a dump).
func (f *evidenceFlags) combine(v *trace.Verdict, popt trace.PlanOptions) (*trace.Verdict, error) {
	if !f.given() {
		return v, nil
	}
	return trace.Combine(v, nil, nil, popt), nil
}
