package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/repro"
)

// reproFlags are the flags of nanhunt repro.
type reproFlags struct {
	op     string
	step   int
	rank   int
	output string
	device string
	force  bool
}

func reproCommand() *cobra.Command {
	var f reproFlags
	cmd := &cobra.Command{
		Use:   "repro DUMP -o DIR [--op NAME] [--step S] [--rank R] [--device cpu|cuda|npu]",
		Short: "Write a single-op reproduction case from a tensor dump",
		Long: `repro writes a folder that re-runs one recorded call alone with PyTorch:

  DIR/*.pt         the tensors msprobe saved for the call (names kept)
  DIR/case.json    the call: entry, api, step, rank, non-tensor arguments,
                   recorded output statistics
  DIR/repro.py     loads the tensors, calls the API again (for a backward
                   entry: the forward call, then its backward with the
                   recorded gradients) and compares with the recording

DUMP is a dump_path, a step folder or a rank folder of an msprobe dump made
with task "tensor" (dump_tensor_data/*.pt). Without --op, --step and --rank
the call is the root cause that nanhunt trace finds. --op takes an entry
name (Torch.sqrt.0.backward) or an API call without direction (Torch.sqrt.0,
its forward). DIR must not be inside the dump, and must be empty or absent
unless --force.

A dump is untrusted input. Tensor files are copied only from inside DUMP (a
dump_data_dir outside it is not followed, a symbolic link leading out of it
is refused), with at most their permission bits, and only when reading them
without loading them shows nothing but a tensor (a pickle naming anything
else, a .npy file of objects are refused). The case folder is written all or
nothing: a failed or interrupted run (Ctrl-C, SIGTERM, SIGHUP) leaves no
partial file. repro.py loads with torch.load(weights_only=True).

  python3 DIR/repro.py [--device cpu|cuda|npu]
    exits 1 when the NaN/Inf comes back, 0 when the results are finite,
    2 when the call cannot run there.

Exit status: 0 the case was written, 2 bad usage or unusable input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRepro(cmd, args[0], &f)
		},
	}
	cmd.Flags().StringVar(&f.op, "op", "", "entry to reproduce, e.g. Torch.sqrt.0.backward (default: the root cause found by trace)")
	f.step, f.rank = repro.Auto, repro.Auto
	cmd.Flags().Var((*autoInt)(&f.step), "step", "step of the call (default: the root cause's)")
	cmd.Flags().Var((*autoInt)(&f.rank), "rank", "rank of the call (default: the root cause's first rank)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "case folder to write (required; absent or empty)")
	cmd.Flags().StringVar(&f.device, "device", "cpu", "default device of repro.py: cpu, cuda, cuda:N, npu or npu:N")
	cmd.Flags().BoolVar(&f.force, "force", false, "write into a non-empty case folder")
	return cmd
}

func runRepro(cmd *cobra.Command, path string, f *reproFlags) error {
	if f.output == "" {
		return fmt.Errorf("-o DIR is required")
	}
	if cmd.Flags().Changed("step") && f.step < 0 {
		return fmt.Errorf("--step %d: want a step number", f.step)
	}
	if cmd.Flags().Changed("rank") && f.rank < 0 {
		return fmt.Errorf("--rank %d: want a rank number", f.rank)
	}
	var g outguard.Guard
	g.Dump(path)
	if err := g.Check(out("-o", f.output)); err != nil {
		return err
	}
	ctx, stop := reproSignals(cmd.Context())
	defer stop()
	c, err := repro.Write(repro.Options{
		Path: path, Op: f.op, Step: f.step, Rank: f.rank,
		Out: f.output, Force: f.force, Device: f.device, Context: ctx,
	})
	if err != nil {
		return err
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "nanhunt: note: %s\n", w)
	}
	w := cmd.OutOrStdout()
	from := ""
	switch {
	case c.FromVerdict && c.Comparison:
		from = " (the root cause's call, on a rank that did not make it: a clean one to compare with)"
	case c.FromVerdict:
		from = " (the root cause found by trace)"
	}
	files := "tensor files"
	if len(c.Files) == 1 {
		files = "tensor file"
	}
	fmt.Fprintf(w, "wrote the case of %s, step %d, rank %d%s to %s: %d %s, %s, %s\n",
		c.Entry, c.Step, c.Rank, from, c.Dir, len(c.Files), files, repro.CaseJSON, repro.ReproPy)
	script := filepath.Join(c.Dir, repro.ReproPy)
	switch c.Call.Kind {
	case repro.CallDistributed:
		fmt.Fprintf(w, "%s is a torch.distributed call: it cannot be re-run alone (%s exits 2); reproduce the op that fed it instead\n", c.API, repro.ReproPy)
	case repro.CallCustom:
		fmt.Fprintf(w, "%s is a custom API: edit the TODO at the top of %s to import it, then run it\n", c.API, script)
	default:
		fmt.Fprintf(w, "run it: python3 %s   (exit 1: the NaN/Inf comes back, 0: finite, 2: cannot run)\n", shellQuote(script))
	}
	return nil
}

// reproSignals is cancelled by Ctrl-C, SIGTERM and SIGHUP: repro then stops
// copying and removes what it wrote of the case before it exits.
func reproSignals(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

// shellQuote quotes a path for a shell command line when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=+,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// autoInt is an int flag whose default is "chosen for you" (repro.Auto):
// the help states that default in words, once.
type autoInt int

func (a *autoInt) String() string {
	if int(*a) == repro.Auto {
		return ""
	}
	return strconv.Itoa(int(*a))
}

func (a *autoInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a number")
	}
	*a = autoInt(n)
	return nil
}

func (a *autoInt) Type() string { return "int" }
