// Command nanhunt finds where a NaN or Inf was born in a multi-rank training
// run dumped by msprobe. The analysis lives in package trace; this command
// only reads flags, calls it, and writes the verdict.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nanhunt/nanhunt/verdict"
)

func main() {
	limitMemory()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitClean      = 0 // no anomaly, and every expected rank-step was read whole
	exitAnomaly    = 1 // an anomaly was found
	exitError      = 2 // unusable input or bad usage
	exitIncomplete = 3 // no anomaly in what was read, but something expected was not read whole
)

// exitOf is the exit status a verdict gives.
func exitOf(v *verdict.Verdict) int {
	switch {
	case v.Anomaly:
		return exitAnomaly
	case !v.Complete:
		return exitIncomplete
	}
	return exitClean
}

// errInterrupted is the error of a run stopped by Ctrl-C, whichever
// reader saw it first.
var errInterrupted = errors.New("interrupted")

func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext runs nanhunt with args under ctx (Ctrl-C is added to it).
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := rootCommand(stdout, stderr)
	if len(args) == 0 {
		fmt.Fprint(stderr, root.UsageString())
		return exitError
	}
	root.SetArgs(args)
	code := exitClean
	root.SetContext(withExitCode(ctx, &code))
	if cmd, err := root.ExecuteC(); err != nil {
		if errors.Is(err, context.Canceled) {
			err = errInterrupted
		}
		writeError(stderr, err)
		if wantsJSON(cmd, args) && !stdoutHolds(err) {
			writeErrorJSON(stdout, err)
		}
		return exitError
	}
	return code
}
