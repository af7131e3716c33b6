package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/safeio"
	"github.com/nanhunt/nanhunt/policy"
	"github.com/nanhunt/nanhunt/trace"
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
With OUT a shared folder, a node that stops so leaves a mark there, and
the others stop after the same step.

Run one process per node under the job's launcher; OUT may be a folder
(shared, or an object-store mount), where each process writes
summary-node<N>.jsonl, N from the launcher (torchrun GROUP_RANK or RANK,
Slurm SLURM_PROCID, Kubernetes JOB_COMPLETION_INDEX, MPI
OMPI_COMM_WORLD_RANK / PMI_RANK). "{node}" in DUMP or OUT is replaced by N.

Two phases, for the largest runs: --until-first writes no details (code
lines, module chains, tensor rows); "nanhunt trace --detail-steps" on those
summaries prints the steps to summarise again with details (--steps).

Exit status: 0 written, 2 unusable input or bad usage.`,
		Example: `  nanhunt summarize /local/dump -o /shared/summaries/
  torchrun --nnodes 16 --nproc-per-node 1 --no-python nanhunt summarize /local/dump -o /shared/summaries/
  srun --ntasks-per-node=1 nanhunt summarize /local/dump -o /shared/summaries/
  mpirun -npernode 1 nanhunt summarize /local/dump -o /shared/summaries/
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
	return cmd
}

func runSummarize(cmd *cobra.Command, dumpArg string, f *summarizeFlags) error {
	if err := checkJobs(cmd, f.jobs); err != nil {
		return err
	}
	if err := checkSelection(cmd, f.steps, f.ranks); err != nil {
		return err
	}
	if f.output == "" {
		return fmt.Errorf("-o OUT is required: a summary file, or a folder the nodes share")
	}
	node, job := trace.NodeFromEnv(os.Getenv)
	if f.nodeIndex >= 0 {
		node.Index = f.nodeIndex
	}
	if f.nodes > 0 {
		node.Count = f.nodes
	}
	if node.Count > 0 && node.Index >= node.Count {
		return fmt.Errorf("--node-index %d: want below --nodes %d", node.Index, node.Count)
	}
	node.Host, _ = os.Hostname()
	opt := trace.SummaryOptions{Jobs: f.jobs, UntilFirst: f.untilFirst, Node: node, Run: f.run}
	if opt.Run == "" {
		abs, err := filepath.Abs(dumpArg)
		if err != nil {
			return err
		}
		opt.Run = abs // the template, before {node} is replaced: the same on every node
		if job != "" {
			opt.Run = job + ":" + abs
		}
	}
	opt.Path = expandNode(dumpArg, node)
	var err error
	if opt.Steps, opt.Ranks, err = selection(f.steps, f.ranks); err != nil {
		return err
	}
	if f.rules != "" {
		if opt.Rules, err = policy.LoadRules(f.rules); err != nil {
			return &inputError{File: f.rules, Err: err}
		}
	}
	outPath := expandNode(f.output, node)
	if outPath != "-" {
		if fi, err := os.Stat(outPath); (err == nil && fi.IsDir()) || strings.HasSuffix(outPath, "/") {
			if err := os.MkdirAll(outPath, 0o755); err != nil {
				return err
			}
			opt.Shared = outPath // where the other nodes' marks are
			outPath = filepath.Join(outPath, summaryName(node))
		}
	}
	var g outguard.Guard
	g.Dump(opt.Path)
	g.Input(f.rules)
	if err := g.Check(out("-o", outPath)); err != nil {
		return err
	}
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	var st trace.SummaryStats
	err = writeOut(outPath, cmd.OutOrStdout(), func(w io.Writer) error {
		var err error
		st, err = trace.Summarize(ctx, opt, w)
		return err
	})
	if err != nil {
		return err
	}
	where := outPath
	if where == "-" {
		where = "stdout"
	}
	share := ""
	if st.DumpBytes > 0 {
		share = fmt.Sprintf(", %.3f%% of the %s read", 100*float64(st.Written)/float64(st.DumpBytes), safeio.Size(st.DumpBytes))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "nanhunt: summarised %d rank-steps (steps %s) into %s: %s%s\n",
		st.Records, rangesOrNone(st.Steps), where, safeio.Size(st.Written), share)
	if st.StoppedAfter != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "nanhunt: stopped after step %d: %s\n", *st.StoppedAfter, st.Why)
	}
	return nil
}

// summaryName is the file a node writes in a shared folder.
func summaryName(n trace.Node) string {
	if n.Index >= 0 {
		return fmt.Sprintf("summary-node%05d.jsonl", n.Index)
	}
	host := n.Host
	if host == "" {
		host = "local"
	}
	return "summary-" + strings.ReplaceAll(host, string(filepath.Separator), "_") + ".jsonl"
}

// expandNode replaces {node} by the node's index (0 when unknown).
func expandNode(s string, n trace.Node) string {
	return strings.ReplaceAll(s, "{node}", strconv.Itoa(max(n.Index, 0)))
}

func rangesOrNone(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	return dump.FormatRanges(xs)
}
