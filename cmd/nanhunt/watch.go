package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/watch"
)

// watchFlags are the flags of nanhunt watch.
type watchFlags struct {
	traceFlags
	output        string
	onAnomaly     string
	onWarning     string
	exitOnAnomaly bool
	state         string
	poll, settle  time.Duration
	rankTimeout   time.Duration
	idleExit      time.Duration
	untilStep     int
	nice          int
	prune         int
}

func watchCommand() *cobra.Command {
	var f watchFlags
	cmd := &cobra.Command{
		Use:   "watch DUMP_PATH [-o DIR] [--on-anomaly CMD] [--exit-on-anomaly]",
		Short: "Follow a running msprobe job and raise the alarm at the first anomaly that lasts",
		Long: `watch follows the dump_path of a running msprobe job. Each step is analysed
once msprobe has finished writing it (every rank's dump.json unchanged for
--settle and whole, or that rank has begun a later step), with the rules of
nanhunt trace; a clean step is not read again. One line is printed per step:
clean, waiting for ranks, incomplete, could not be read, or the anomaly.

A step that some ranks have finished waits --rank-timeout (default four
--settle periods) for the others after it last moved on; a rank that has not
finished it by then never finished it (it crashed, or its dump.json never
settles): the step is judged on the ranks present, and later steps do not
wait for that rank again until it writes one. When the job ends (--idle-exit)
the steps not finished are judged on what they hold. A step that is not read
whole prints "step N incomplete: rank 3 never wrote it" or "step N: could not
be read (ranks 0-3: unreadable)": it is never called clean.

At the first anomaly that lasts (the next dumped step is read, to tell an
overflow the loss scaler skipped from a lasting NaN), watch prints the
verdict, writes DIR/verdict-stepN.json and DIR/report-stepN.html (never
inside the dump), and runs --on-anomaly with the environment
  NANHUNT_STEP NANHUNT_RANKS NANHUNT_OP NANHUNT_KIND NANHUNT_STAGE
  NANHUNT_VERDICT NANHUNT_HTML NANHUNT_SOURCE NANHUNT_DUMP
NANHUNT_OP, NANHUNT_KIND and NANHUNT_STAGE come from the dump: control
characters in them are escaped as the text report prints them (\x00, \n).
A file of the alarm that could not be written (a full disk) is named on
stderr, and its variable is empty; the hook runs all the same.
A hook typically stops the job (scancel, kill -USR1) or asks msprobe for the
tensors of the suspected APIs. With --exit-on-anomaly watch then exits 1;
without, it goes on printing the steps that complete. An anomaly found while
some ranks of its step never finished raises the alarm too, names them, and
its confidence is at most medium.

--log and --monitor follow a growing training log and the monitor's CSV
files: the first non-finite value they show is printed at once, and the
alarm names the source that saw it first. When the dump cannot show it (it
has checked that step and the next without a lasting anomaly, it has no step
left to check --rank-timeout after the sighting, or the watch ends), the
alarm is raised from that source alone: "the log shows NaN at step 2; the
dump stops at step 1: dump step 2".

Before any alarm, each step checked without an anomaly is also judged for
statistics heading for overflow (the rule of trace's "Heading for overflow",
with the dumped steps before it): a call's tensor statistic that qualifies
prints one line, at the first step it does ("step 12: heading for overflow:
..."; a "warning" event with "ahead" in jsonl), and runs --on-warning once
with the environment
  NANHUNT_STEP NANHUNT_RANKS NANHUNT_OP NANHUNT_TENSOR NANHUNT_STAT
  NANHUNT_DTYPE NANHUNT_LIMIT NANHUNT_STEPS_LEFT NANHUNT_TEXT
  NANHUNT_SOURCE NANHUNT_DUMP
escaped as for --on-anomaly. Warnings never change the exit status, and a
hook that fails is named on stderr as a warning.

It stays out of training's way: one file at a time (--jobs), a lower
scheduling priority (--nice), memory bounded by the steps not yet complete.
--state FILE keeps what was checked, so that a new watch resumes there; a
step not read whole is not recorded as checked, so a resumed watch reads it
again. It must be a regular file (or none yet): a named pipe or a device is
refused at once.

One watch per -o folder and --state file: while it runs, a watch holds a
lock on DIR/watch.lock and STATE.lock, and a second watch on either is
refused at once (exit 2). The lock ends with the process. Ctrl-C, SIGTERM
and SIGHUP stop a watch alike, leaving no file half written.

--prune-clean-tensors N is the one way nanhunt writes inside a dump, and
only when asked: it deletes the dump_tensor_data files of the steps it has
checked clean (every expected rank read whole), keeping those of the last N,
so that a tensor dump of every step fits on disk. It never touches
dump.json, stack.json or construct.json, nor a step that is not checked
clean (an incomplete step keeps every rank's tensors), and follows no
symbolic link; DIR/pruned.log lists what it deleted.

Exit status: 0 stopped without an anomaly and every step checked was read
whole, 1 an anomaly was found (in the dump, or by the log or the monitor
alone; whatever failed after the alarm is named on stderr), 2 unusable
input or bad usage, 3 stopped without an anomaly but some expected
rank-step could not be read whole (the steps were printed as incomplete or
could not be read), or the watch was interrupted before it checked every
step the folder holds (the last line names them).`,
		Example: `  nanhunt watch ./dump_path --exit-on-anomaly
  nanhunt watch ./dump_path -o alarms --on-anomaly 'scancel $SLURM_JOB_ID'
  nanhunt watch ./dump_path --log train.log --monitor ./monitor_output --state watch.json
  nanhunt watch ./dump_path --format jsonl --idle-exit 10m`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runWatch(cmd, args[0], &f) },
	}
	f.registerAnalysis(cmd)
	// refused (runWatch says why): not a flag of watch's to show
	cmd.Flags().Lookup("steps").Hidden = true
	cmd.Flags().Lookup("jobs").DefValue = "1"
	f.jobs = 1
	cmd.Flags().Lookup("jobs").Usage = "files read at once"
	cmd.Flags().StringVar(&f.format, "format", "text", "output: text (a line per step, then the verdict) or jsonl (one JSON object per event)")
	f.evidence.register(cmd)
	cmd.Flags().StringVarP(&f.output, "output", "o", "nanhunt-watch", "folder for the verdict and the HTML report of the alarm (run from inside the dump, the default is nanhunt-watch-NAME beside it)")
	addAlias(cmd, "out", "output")
	cmd.Flags().StringVar(&f.onAnomaly, "on-anomaly", "", "shell command to run at the alarm (see the environment above)")
	cmd.Flags().StringVar(&f.onWarning, "on-warning", "", "shell command to run once per statistic heading for overflow (see the environment above)")
	cmd.Flags().BoolVar(&f.exitOnAnomaly, "exit-on-anomaly", false, "exit 1 right after the alarm")
	cmd.Flags().StringVar(&f.state, "state", "", "file that keeps what was checked, to resume a watch")
	cmd.Flags().DurationVar(&f.poll, "poll", 500*time.Millisecond, "how often to look at the folder")
	cmd.Flags().DurationVar(&f.settle, "settle", 2*time.Second, "how long a dump.json must stay unchanged to count as written")
	cmd.Flags().DurationVar(&f.rankTimeout, "rank-timeout", 0, "how long a step that some ranks have finished waits for the others after it last moved on; then it is judged without them")
	cmd.Flags().Lookup("rank-timeout").DefValue = fmt.Sprintf("%d × --settle", watch.DefaultRankTimeouts)
	cmd.Flags().DurationVar(&f.idleExit, "idle-exit", 0, "stop when the folder has not changed for this long (0: never)")
	cmd.Flags().IntVar(&f.untilStep, "until-step", -1, "stop once this step is checked")
	cmd.Flags().IntVar(&f.nice, "nice", 10, "scheduling priority to lower the watch to (0 keeps it)")
	cmd.Flags().IntVar(&f.prune, "prune-clean-tensors", 0, "delete the tensor files (dump_tensor_data) of the steps checked clean, keeping those of the last N (at least 1); logged to DIR/pruned.log")
	return cmd
}

func runWatch(cmd *cobra.Command, path string, f *watchFlags) error {
	if err := f.check(cmd, "text", "jsonl"); err != nil {
		return err
	}
	if f.steps != "" {
		return fmt.Errorf("--steps: watch checks every step as it completes (use --until-step or --state)")
	}
	if f.poll <= 0 || f.settle <= 0 || f.idleExit < 0 || f.rankTimeout < 0 {
		return fmt.Errorf("--poll and --settle must be above 0, --idle-exit and --rank-timeout 0 or above")
	}
	if info, err := os.Stat(path); err != nil {
		return err
	} else if !info.IsDir() {
		return fmt.Errorf("%s: not a folder: watch follows a dump_path", path)
	}
	outDir, moved, err := watchOutDir(path, f.output, cmd.Flags().Changed("output"))
	if err != nil {
		return err
	}
	if moved {
		fmt.Fprintf(cmd.ErrOrStderr(), "nanhunt: watch: ./%s would be inside the dump; the alarm's files go to %s (-o chooses)\n", f.output, outDir)
	}
	if err := f.guard(path, f.outputs(outDir)...); err != nil {
		return err
	}
	in, err := f.inputs(cmd, path, outDir)
	if err != nil {
		return err
	}
	w := &watchPrinter{cmd: cmd, f: f, dump: path, outDir: outDir}
	in.Started = func() {
		lowerPriority(f.nice)
		if f.format == "text" {
			fmt.Fprintf(cmd.ErrOrStderr(), "nanhunt: watching %s: a line per step as msprobe completes it (settle %v), the alarm's files to %s; Ctrl-C stops\n", path, f.settle, outDir)
		}
	}
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	res, err := nanhunt.Watch(ctx, in, w.event)
	return w.finish(watch.Result(res), err)
}

// inputs are the flags as the library's WatchInputs; outDir is the -o
// folder.
func (f *watchFlags) inputs(cmd *cobra.Command, path, outDir string) (nanhunt.WatchInputs, error) {
	_, ranks, err := selection(f.steps, f.ranks)
	if err != nil {
		return nanhunt.WatchInputs{}, err
	}
	in := nanhunt.WatchInputs{Dump: path, Ranks: ranks, WorldSize: f.worldSize, RulesFile: f.rules, Jobs: f.jobs, Strict: f.strict,
		Poll: f.poll, Settle: f.settle, RankTimeout: f.rankTimeout, IdleExit: f.idleExit,
		KeepGoing: !f.exitOnAnomaly, OutDir: outDir, StateFile: f.state, PruneKeep: f.prune}
	if in.Log, in.Monitor, err = f.evidence.inputs(); err != nil {
		return in, err
	}
	if cmd.Flags().Changed("prune-clean-tensors") && f.prune < 1 {
		return in, fmt.Errorf("--prune-clean-tensors %d: keep at least the last clean step (the one before an anomaly)", f.prune)
	}
	if f.untilStep >= 0 {
		in.UntilStep = &f.untilStep
	}
	return in, nil
}

// watchOutDir is the absolute -o folder. The default, ./nanhunt-watch, is
// inside the dump when the watch runs from in it ("cd dump_path && nanhunt
// watch ."): then it is nanhunt-watch-NAME beside the dump (NAME the dump
// folder's), and moved says so. A folder given with -o is kept as given
// (the guard refuses it inside the dump).
func watchOutDir(dump, output string, given bool) (dir string, moved bool, err error) {
	dir, err = filepath.Abs(output)
	if err != nil || given {
		return dir, false, err
	}
	absDump, err := filepath.Abs(dump)
	if err != nil {
		return "", false, err
	}
	// compared as the filesystem resolves them: the working folder may be
	// reached through a symbolic link to the dump, or the dump through one
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	rel, err := filepath.Rel(real(absDump), real(filepath.Dir(dir)))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return dir, false, nil
	}
	return filepath.Join(filepath.Dir(absDump), output+"-"+filepath.Base(absDump)), true, nil
}

// outputs are what a watch writes, for the guard: the output folder, the
// state file, and the lock file beside each.
func (f *watchFlags) outputs(outDir string) []outguard.Output {
	outs := []outguard.Output{out("-o", outDir), out("-o", watch.OutLockPath(outDir))}
	if f.state != "" {
		outs = append(outs, out("--state", f.state), out("--state", watch.StateLockPath(f.state)))
	}
	return outs
}

// finish is the end of a watch: its exit status, or the failure to report.
// Once the alarm was raised it is the answer: exit status 1, whatever
// failed besides (a file of the alarm, the hook, the state) named on
// stderr. Without an alarm, a failure is exit status 2.
func (p *watchPrinter) finish(res watch.Result, err error) error {
	var se *watch.SaveError
	if errors.As(err, &se) {
		err = fmt.Errorf("--state %w", err)
	}
	err = errors.Join(err, p.err)
	if res.Alarm == nil && !p.alarmed {
		if err != nil {
			return err
		}
		setExit(p.cmd, watchExit(res))
		return nil
	}
	if err != nil {
		writeError(p.cmd.ErrOrStderr(), err)
	}
	setExit(p.cmd, exitAnomaly)
	return nil
}

// watchExit is the exit status of a watch that ended: 1 after an alarm,
// 3 when some expected rank-step of the steps checked was not read whole,
// 0 only when every one was and none showed an anomaly.
func watchExit(res watch.Result) int {
	switch {
	case res.Alarm != nil:
		return exitAnomaly
	case !res.Complete:
		return exitIncomplete
	}
	return exitClean
}

// runHook runs the command of a hook flag (--on-anomaly, --on-warning)
// through /bin/sh with what it is about in its environment; its output
// goes to stderr, so that stdout keeps one format.
func runHook(ctx context.Context, flag, command string, env []string) error {
	c := shellCommand(ctx, command)
	c.Env = append(os.Environ(), env...)
	c.Stdout, c.Stderr = os.Stderr, os.Stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s %q: %w", flag, command, err)
	}
	return nil
}
