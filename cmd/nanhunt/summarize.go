package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/safeio"
	"github.com/nanhunt/nanhunt/internal/trace"
)

type summarizeFlags struct {
	steps, ranks string
	rules        string
	jobs         int
	output       string
	untilFirst   bool
	run          string
	nodeIndex    int
	nodes        int
	jobID        string
}

func summarizeCommand() *cobra.Command {
	var f summarizeFlags
	cmd := &cobra.Command{
		Use:   "summarize DUMP -o OUT",
		Short: "Summarise the rank folders on this node, for one nanhunt trace over all nodes",
		Long: `summarize reads the rank folders present on this node (any subset of ranks and
steps, any layout trace reads) with trace's rules and byte search, and writes
one small summary (nanhunt/summary/v1, JSON lines). "nanhunt trace" on the
summaries of every node gives the verdict the rank folders give in one place.

It reads the steps in order and stops after the next dumped step of the
first anomaly that lasts into it: no later step can change the verdict.

Run one process per node under the job's launcher; OUT may be a folder
(shared, or an object-store mount), where each process writes
summary-node<N>.jsonl, N from the launcher (torchrun GROUP_RANK or RANK,
Slurm SLURM_PROCID, Kubernetes JOB_COMPLETION_INDEX, MPI
OMPI_COMM_WORLD_RANK / PMI_RANK) or --node-index; without either,
summary-<host>-<hash of DUMP>.jsonl. "{node}" in DUMP or OUT is replaced by
N (and refused without it). A launcher's variable that does not parse
(RANK=-5, a job id with "/" or a control character) is refused, naming
it: a node's place is never guessed. A summary of another run, node, DUMP or --steps in OUT is not written
over: the command says so and writes nothing.

With OUT a shared folder, a node that stops so leaves a mark there, and
the other nodes of the same job stop after the same step. A mark belongs
to one job: --job-id, else the launcher's (Slurm SLURM_JOB_ID, torchrun
--rdzv-id, MPI PMIX_NAMESPACE or Open MPI's job id). The marks of the run
that another job left (an earlier job given the same --run) are removed,
and nothing else is. Without a job id the nodes share, a node cannot tell
its own job's marks from an earlier job's: it leaves and follows none,
removes the run's marks it finds, and reads all its steps; the summary
records an id made when it started. A node that stopped on a mark names
it; when the joined summaries do not hold the anomaly it names, "nanhunt
trace" counts the steps the node did not read as unread (exit status 3),
never clean.

With --nodes (or the launcher's node count) the join names a node whose
summary is missing: its ranks are expected and unread, so the joined
verdict is never clean (exit status 3), and an origin's confidence is at
most medium.

Two phases, for the largest runs: --until-first writes no details (code
lines, module chains, tensor rows); "nanhunt trace --detail-steps" on those
summaries prints the steps to summarise again with details (--steps), into
another folder.

Exit status: 0 written, 2 unusable input or bad usage.`,
		Example: `  nanhunt summarize /local/dump -o /shared/summaries/
  torchrun --nnodes 16 --nproc-per-node 1 --rdzv-id $JOB --no-python nanhunt summarize /local/dump -o /shared/summaries/
  srun --ntasks-per-node=1 nanhunt summarize /local/dump -o /shared/summaries/
  mpirun -npernode 1 nanhunt summarize /local/dump -o /shared/summaries/
  nanhunt summarize /local/dump -o /shared/summaries/ --job-id $JOB --node-index 3 --nodes 16
  nanhunt trace /shared/summaries/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSummarize(cmd, args[0], &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.steps, "steps", "", "only these steps, e.g. 4-8 or 0,3-7")
	fl.StringVar(&f.ranks, "ranks", "", "only these ranks, e.g. 0,3-7")
	fl.StringVar(&f.rules, "rules", "", "JSON file of extra exclusion rules (the same on every node)")
	fl.IntVar(&f.jobs, "jobs", 0, "files read at once (default: one per CPU)")
	fl.StringVarP(&f.output, "output", "o", "", "the summary file, or a folder for summary-node<N>.jsonl (- for stdout)")
	fl.BoolVar(&f.untilFirst, "until-first", false, "phase 1: no details, the smallest summary (see --detail-steps of trace)")
	fl.StringVar(&f.run, "run", "", "the run's name, the same on every node (default: DUMP as given, made absolute)")
	fl.IntVar(&f.nodeIndex, "node-index", -1, "this node's index (default: from the launcher)")
	fl.IntVar(&f.nodes, "nodes", 0, "how many nodes summarise (default: from the launcher)")
	fl.StringVar(&f.jobID, "job-id", "", "this launch's id, the same on every node (default: the launcher's job id)")
	return cmd
}

func runSummarize(cmd *cobra.Command, dumpArg string, f *summarizeFlags) error {
	if err := checkJobs(cmd, f.jobs); err != nil {
		return err
	}
	if err := checkPlaceFlags(cmd, f); err != nil {
		return err
	}
	if err := checkSelection(cmd, f.steps, f.ranks); err != nil {
		return err
	}
	if f.output == "" {
		return fmt.Errorf("-o OUT is required: a summary file, or a folder the nodes share")
	}
	opt, err := summaryOptions(dumpArg, f)
	if err != nil {
		return err
	}
	outPath, err := summaryTarget(f.output, &opt)
	if err != nil {
		return err
	}
	var g outguard.Guard
	g.Dump(opt.Path)
	g.Input(f.rules)
	if err := g.Check(out("-o", outPath)); err != nil {
		return err
	}
	if err := trace.CheckTarget(opt); err != nil {
		return err
	}
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	var st trace.SummaryStats
	summarise := func(w io.Writer) error {
		var err error
		st, err = trace.Summarize(ctx, opt, w)
		return err
	}
	if outPath == "-" {
		err = summarise(cmd.OutOrStdout())
	} else {
		// written to a temporary file of its own and renamed over outPath:
		// two processes writing the same summary never interleave; one
		// that wrote another run's or node's summary there meanwhile is
		// not written over
		err = outguard.WriteFileChecked(outPath, summarise, func() error { return trace.CheckTarget(opt) })
	}
	if err != nil {
		return err
	}
	reportSummary(cmd.ErrOrStderr(), outPath, opt, st)
	return nil
}

// summaryOptions are what the flags and the launcher's environment say to
// summarise: the node, the job, the run, the dump folder and the rules.
func summaryOptions(dumpArg string, f *summarizeFlags) (trace.SummaryOptions, error) {
	node, job, err := trace.NodeFromEnv(os.Getenv)
	if err != nil {
		return trace.SummaryOptions{}, err
	}
	if node, err = nodeFlags(node, f); err != nil {
		return trace.SummaryOptions{}, err
	}
	if f.jobID != "" {
		if err := trace.CheckJobID(f.jobID); err != nil {
			return trace.SummaryOptions{}, fmt.Errorf("--job-id %q: %w", f.jobID, err)
		}
		job = trace.Job{ID: f.jobID, From: "flag"}
	}
	node.Host, _ = os.Hostname()
	opt := trace.SummaryOptions{Jobs: f.jobs, UntilFirst: f.untilFirst, Node: node, Run: f.run, Job: job}
	if opt.Run == "" {
		abs, err := filepath.Abs(dumpArg)
		if err != nil {
			return opt, err
		}
		opt.Run = abs // the template, before {node} is replaced: the same on every node
		if job.Shared() {
			opt.Run = job.ID + ":" + abs
		}
	}
	if opt.Path, err = expandNode("DUMP", dumpArg, node); err != nil {
		return opt, err
	}
	if opt.Steps, opt.Ranks, err = selection(f.steps, f.ranks); err != nil {
		return opt, err
	}
	if opt.Rules, err = loadRules(f.rules); err != nil {
		return opt, err
	}
	return opt, nil
}

// loadRules reads --rules (nil when not given), for the commands that
// call the library's parts (summarize, watch).
func loadRules(file string) ([]policy.Rule, error) {
	if file == "" {
		return nil, nil
	}
	rules, err := policy.LoadRules(file)
	if err != nil {
		return nil, &inputError{File: file, Err: err}
	}
	return rules, nil
}

// checkPlaceFlags refuses --node-index and --nodes given with the values
// that stand for "not given".
func checkPlaceFlags(cmd *cobra.Command, f *summarizeFlags) error {
	switch fl := cmd.Flags(); {
	case fl.Changed("node-index") && f.nodeIndex < 0:
		return fmt.Errorf("--node-index %d: want a number from 0 to %d", f.nodeIndex, trace.MaxNodes-1)
	case fl.Changed("nodes") && f.nodes < 1:
		return fmt.Errorf("--nodes %d: want a count from 1 to %d", f.nodes, trace.MaxNodes)
	}
	return nil
}

// nodeFlags puts --node-index and --nodes over what the launcher said,
// and refuses a place that cannot be: an index below 0 (other than the
// default, none) or not below the count, a count below 1 or above
// trace.MaxNodes.
func nodeFlags(node trace.Node, f *summarizeFlags) (trace.Node, error) {
	switch {
	case f.nodeIndex < -1 || f.nodeIndex >= trace.MaxNodes:
		return node, fmt.Errorf("--node-index %d: want a number from 0 to %d", f.nodeIndex, trace.MaxNodes-1)
	case f.nodes < 0 || f.nodes > trace.MaxNodes:
		return node, fmt.Errorf("--nodes %d: want a count from 1 to %d", f.nodes, trace.MaxNodes)
	}
	if f.nodeIndex >= 0 {
		node.Index = f.nodeIndex
	}
	if f.nodes > 0 {
		node.Count = f.nodes
	}
	if node.Count > 0 && node.Index >= node.Count {
		return node, fmt.Errorf("%s: want below %s", placeWord(f.nodeIndex >= 0, "--node-index", "node index", node.Index, node),
			placeWord(f.nodes > 0, "--nodes", "node count", node.Count, node))
	}
	return node, nil
}

// placeWord names a node's index or count and where it came from: the
// flag, or the launcher's variables.
func placeWord(fromFlag bool, flag, what string, v int, node trace.Node) string {
	if fromFlag {
		return fmt.Sprintf("%s %d", flag, v)
	}
	return fmt.Sprintf("the %s %d that %s's variables give", what, v, node.Launcher)
}

// summaryTarget is the file the summary goes to ("-": stdout): in a folder
// (an existing one, or a path ending in /), the node's own name there, and
// the folder is where the nodes of the job leave their marks.
func summaryTarget(output string, opt *trace.SummaryOptions) (string, error) {
	outPath, err := expandNode("-o", output, opt.Node)
	if err != nil {
		return "", err
	}
	if outPath == "-" {
		return outPath, nil
	}
	if fi, err := os.Stat(outPath); (err == nil && fi.IsDir()) || strings.HasSuffix(outPath, "/") {
		if err := os.MkdirAll(outPath, 0o755); err != nil {
			return "", err
		}
		opt.Shared = outPath // where the other nodes' marks are
		name, err := summaryName(opt.Node, opt.Path)
		if err != nil {
			return "", err
		}
		outPath = filepath.Join(outPath, name)
	}
	opt.Target = outPath
	return outPath, nil
}

// reportSummary says on stderr what was written, where the node stopped,
// and what became of the marks.
func reportSummary(w io.Writer, outPath string, opt trace.SummaryOptions, st trace.SummaryStats) {
	where := outPath
	if where == "-" {
		where = "stdout"
	}
	share := ""
	if st.DumpBytes > 0 {
		share = fmt.Sprintf(", %.3f%% of the %s read", 100*float64(st.Written)/float64(st.DumpBytes), safeio.Size(st.DumpBytes))
	}
	fmt.Fprintf(w, "nanhunt: summarised %d rank-steps (steps %s) into %s: %s%s\n",
		st.Records, rangesOrNone(st.Steps), where, safeio.Size(st.Written), share)
	if st.StoppedAfter != nil {
		fmt.Fprintf(w, "nanhunt: stopped after step %d: %s\n", *st.StoppedAfter, st.Why)
	}
	if len(st.RemovedMarks) > 0 {
		fmt.Fprintf(w, "nanhunt: removed %d mark(s) another job of this run left in %s: %s\n", len(st.RemovedMarks), opt.Shared, strings.Join(st.RemovedMarks, ", "))
	}
	if st.MarksOff {
		fmt.Fprintf(w, "nanhunt: no job id shared by the nodes (--job-id, or the launcher's): no mark was left in %s or followed, so this node read every step; the summary records the job id %s made here\n",
			opt.Shared, st.Job.ID)
	}
}

// summaryName is the file a node writes in a shared folder: by its index
// when the launcher or --node-index gives one, else by its host and the
// folder it summarises, so that two node folders summarised on one host
// do not share a name.
func summaryName(n trace.Node, dumpPath string) (string, error) {
	if n.Index >= 0 {
		return fmt.Sprintf("summary-node%05d.jsonl", n.Index), nil
	}
	host := n.Host
	if host == "" {
		host = "local"
	}
	abs, err := filepath.Abs(dumpPath)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return "summary-" + trace.SafeName(host) + "-" + hex.EncodeToString(sum[:4]) + ".jsonl", nil
}

// expandNode replaces {node} in the argument of flag by the node's index,
// the one its summary's header records; without an index it is refused.
func expandNode(flag, s string, n trace.Node) (string, error) {
	if !strings.Contains(s, "{node}") {
		return s, nil
	}
	if n.Index < 0 {
		return "", fmt.Errorf("%s %q: {node} needs this node's index, and no launcher's variable (RANK, SLURM_PROCID, JOB_COMPLETION_INDEX, OMPI_COMM_WORLD_RANK, PMI_RANK, ...) gives one: give --node-index", flag, s)
	}
	return strings.ReplaceAll(s, "{node}", strconv.Itoa(n.Index)), nil
}

func rangesOrNone(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	return notation.FormatRanges(xs)
}
