package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/sources"
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

// inputs are the flags as the library takes them.
func (f *evidenceFlags) inputs() (nanhunt.LogInputs, nanhunt.MonitorInputs, error) {
	log := nanhunt.LogInputs{Paths: f.logs, Format: f.format, Patterns: f.patterns}
	if f.offset != "" {
		n, err := strconv.Atoi(f.offset)
		if err != nil {
			return log, nanhunt.MonitorInputs{}, fmt.Errorf("--log-step-offset %q: want an integer such as -1", f.offset)
		}
		log.StepOffset = &n
	}
	return log, nanhunt.MonitorInputs{Dir: f.monitor, TPSize: f.tpSize}, nil
}

// guard adds the logs and the monitor output to the inputs g protects.
func (f *evidenceFlags) guard(g *outguard.Guard) {
	g.Input(sources.Log{Paths: f.logs}.Files()...)
	g.InputTree(f.monitor)
}
