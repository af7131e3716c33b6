package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/notation"
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
	in, err := f.inputs(cmd, dumpArg)
	if err != nil {
		return err
	}
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	res, err := nanhunt.Summarize(ctx, in)
	if err != nil {
		return err
	}
	reportSummary(cmd.ErrOrStderr(), res)
	return nil
}

// inputs are the flags as the library's SummarizeInputs: -o - is
// standard output.
func (f *summarizeFlags) inputs(cmd *cobra.Command, dumpArg string) (nanhunt.SummarizeInputs, error) {
	in := nanhunt.SummarizeInputs{Dump: dumpArg, Output: f.output, RulesFile: f.rules, Jobs: f.jobs, UntilFirst: f.untilFirst,
		Run: f.run, Nodes: f.nodes, JobID: f.jobID}
	if f.output == "-" {
		in.Output, in.Writer = "", cmd.OutOrStdout()
	}
	if f.nodeIndex >= 0 {
		in.NodeIndex = &f.nodeIndex
	}
	var err error
	in.Steps, in.Ranks, err = selection(f.steps, f.ranks)
	return in, err
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

// reportSummary says on stderr what was written, where the node stopped,
// and what became of the marks.
func reportSummary(w io.Writer, res nanhunt.SummaryResult) {
	where := res.File
	if where == "" {
		where = "stdout"
	}
	share := ""
	if res.DumpBytes > 0 {
		share = fmt.Sprintf(", %.3f%% of the %s read", 100*float64(res.Written)/float64(res.DumpBytes), safeio.Size(res.DumpBytes))
	}
	fmt.Fprintf(w, "nanhunt: summarised %d rank-steps (steps %s) into %s: %s%s\n",
		res.Records, rangesOrNone(res.Steps), where, safeio.Size(res.Written), share)
	if res.StoppedAfter != nil {
		fmt.Fprintf(w, "nanhunt: stopped after step %d: %s\n", *res.StoppedAfter, res.Why)
	}
	if len(res.RemovedMarks) > 0 {
		fmt.Fprintf(w, "nanhunt: removed %d mark(s) another job of this run left in %s: %s\n", len(res.RemovedMarks), res.Shared, strings.Join(res.RemovedMarks, ", "))
	}
	if res.MarksOff {
		fmt.Fprintf(w, "nanhunt: no job id shared by the nodes (--job-id, or the launcher's): no mark was left in %s or followed, so this node read every step; the summary records the job id %s made here\n",
			res.Shared, res.JobID)
	}
}

func rangesOrNone(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	return notation.FormatRanges(xs)
}
