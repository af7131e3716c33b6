package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/internal/report"
)

type exitKey struct{}

func withExitCode(ctx context.Context, code *int) context.Context {
	return context.WithValue(ctx, exitKey{}, code)
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

Exit status: 0 no anomaly and every expected rank-step read whole, 1 anomaly
found, 2 unusable input or bad usage, 3 no anomaly in what could be read but
some expected rank-step could not be read whole (the first line names it).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	// the old names of renamed flags: refused, or noted and taken
	root.PersistentPreRunE = checkOldNames
	root.AddCommand(traceCommand(), summarizeCommand(), planCommand(), reproCommand(), reportCommand(), exportCommand(), demoCommand(), synthCommand(), watchCommand(), versionCommand(), flagsCommand())
	return root
}

func writeError(w io.Writer, err error) {
	// line by line: the command's own messages may span lines
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = report.Printable(l)
	}
	fmt.Fprintf(w, "nanhunt: %s\n", strings.Join(lines, "\n"))
}

// signalContext is cancelled by Ctrl-C, SIGTERM (a job scheduler's stop,
// kill's default) and SIGHUP (a closed terminal) alike: every command
// stops reading, removes what it had half written, and exits.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}
