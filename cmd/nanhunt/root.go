package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/dump"
)

type exitKey struct{}

func withExitCode(code *int) context.Context {
	return context.WithValue(context.Background(), exitKey{}, code)
}

func setExit(cmd *cobra.Command, code int) {
	if p, ok := cmd.Context().Value(exitKey{}).(*int); ok {
		*p = code
	}
}

func rootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "nanhunt",
		Short: "Find where a NaN or Inf was born in an msprobe dump of a multi-rank training run",
		Long: `nanhunt reads msprobe dumps (dump_path/stepN/rankM/{dump,stack,construct}.json)
and names the first bad step, the rank(s) where the NaN/Inf was born, the op,
its stage and kind, the user's code line, and the collective that carried it
to the other ranks.

Exit status: 0 no anomaly, 1 anomaly found, 2 unusable input or bad usage.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(traceCommand(), planCommand(), reproCommand(), reportCommand(), exportCommand(), demoCommand(), synthCommand(), versionCommand())
	return root
}

func writeError(w io.Writer, err error) {
	fmt.Fprintf(w, "nanhunt: %v\n", err)
}

// signalContext is cancelled by Ctrl-C.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt)
}

// openOutput opens -o (or stdout) and refuses paths inside the dump: the
// user's dump folder is never written to.
func openOutput(path, dumpPath string, stdout io.Writer) (io.Writer, func() error, error) {
	if path == "" || path == "-" {
		return stdout, func() error { return nil }, nil
	}
	if dump.Inside(path, dumpPath) {
		return nil, nil, fmt.Errorf("refusing to write %s inside the dump folder %s", path, dumpPath)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}
