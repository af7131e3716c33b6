package nanhunt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/trace"
)

// SummarizeInputs is what Summarize reads on one node of a run, and where
// its summary goes. Dump, and Output or Writer, are required.
type SummarizeInputs struct {
	// Dump holds the rank folders present on this node (any subset of
	// ranks and steps, any layout Run reads). "{node}" in it is replaced
	// by the node's index.
	Dump string
	// Output is the summary file, or a folder (an existing one, or a path
	// ending in "/") that the nodes share, where this node writes
	// summary-node<N>.jsonl (by its index; without one,
	// summary-<host>-<hash of Dump>.jsonl) and leaves its marks. "{node}"
	// in it is replaced by the node's index. "": the summary goes to
	// Writer.
	Output string
	Writer io.Writer

	// Steps and Ranks restrict the summary to these steps and ranks (nil:
	// all); RulesFile and Jobs are as for Run.
	Steps, Ranks map[int]bool
	RulesFile    string
	Jobs         int
	// UntilFirst is the first of two phases: no details (code lines,
	// module chains, tensor rows), the smallest summary.
	UntilFirst bool
	// Run names the run, the same on every node (default: Dump as given,
	// made absolute, after the job's id when the nodes share one).
	Run string

	// NodeIndex and Nodes place this node among those that summarise
	// (nil and 0: as the launcher's environment says); JobID names this
	// launch, the same on every node ("": the launcher's job id). Getenv
	// reads the launcher's environment (nil: os.Getenv).
	NodeIndex *int
	Nodes     int
	JobID     string
	Getenv    func(string) string
}

// SummaryResult is what Summarize wrote, and where the node stopped.
type SummaryResult struct {
	// File is the summary written; "" when it went to Writer. Shared is
	// the folder the nodes share, where the marks are ("" when Output
	// names a file).
	File, Shared string
	Records      int   // rank-steps written
	Steps        []int // steps read
	DumpBytes    int64 // bytes of the dump.json files read
	Written      int64 // bytes of summary written
	// StoppedAfter is the last step read when the steps after it cannot
	// change the verdict (an anomaly that lasts into the next dumped step
	// was seen); nil when every step was read. Why says why.
	StoppedAfter *int
	Why          string
	// JobID is the job the summary records. MarksOff is set when a shared
	// folder was given but no mark was left or followed, for want of a job
	// id the nodes share (the id is then one made here).
	JobID    string
	MarksOff bool
	// RemovedMarks are the marks of the run that another job left in the
	// shared folder, which were removed.
	RemovedMarks []string
}

// Summarize reads the rank folders of one node with the rules and the
// byte search of Run and writes one small summary (nanhunt/summary/v1,
// JSON lines); Run on the summaries of every node gives the verdict the
// rank folders give in one place. It reads the steps in order and stops
// after the next dumped step of the first anomaly that lasts into it.
//
// The node's place comes from NodeIndex and Nodes, else from the
// launcher's variables (torchrun, Slurm, Kubernetes, MPI); one that does
// not parse is refused, never guessed. The summary is written through a
// temporary file renamed over Output, never inside the dump nor over an
// input, and never over the summary of another run, node, dump folder or
// selection. Its errors name the inputs as "nanhunt summarize" names them
// (DUMP, -o, --node-index, --nodes, --job-id).
func Summarize(ctx context.Context, in SummarizeInputs) (SummaryResult, error) {
	opt, err := in.options()
	if err != nil {
		return SummaryResult{}, err
	}
	file, err := in.target(&opt)
	if err != nil {
		return SummaryResult{}, err
	}
	if file == "" && in.Writer == nil {
		return SummaryResult{}, errors.New("no output: give Output or Writer")
	}
	var g outguard.Guard
	g.Dump(opt.Path)
	g.Input(in.RulesFile)
	if err := g.Check(outguard.Output{Flag: "-o", Path: file}); err != nil {
		return SummaryResult{}, err
	}
	if err := trace.CheckTarget(ctx, opt); err != nil {
		return SummaryResult{}, err
	}
	var st trace.SummaryStats
	summarise := func(w io.Writer) error {
		var err error
		st, err = trace.Summarize(ctx, opt, w)
		return err
	}
	if file == "" {
		err = summarise(in.Writer)
	} else {
		// written to a temporary file of its own and renamed over file:
		// two processes writing the same summary never interleave; one
		// that wrote another run's or node's summary there meanwhile is
		// not written over
		err = outguard.WriteFileChecked(file, summarise, func() error { return trace.CheckTarget(ctx, opt) })
	}
	if err != nil {
		return SummaryResult{}, err
	}
	return SummaryResult{File: file, Shared: opt.Shared, Records: st.Records, Steps: st.Steps, DumpBytes: st.DumpBytes, Written: st.Written,
		StoppedAfter: st.StoppedAfter, Why: st.Why, JobID: st.Job.ID, MarksOff: st.MarksOff, RemovedMarks: st.RemovedMarks}, nil
}

// options are what to summarise: the node, the job, the run, the dump
// folder and the rules.
func (in SummarizeInputs) options() (trace.SummaryOptions, error) {
	getenv := in.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	node, job, err := trace.NodeFromEnv(getenv)
	if err != nil {
		return trace.SummaryOptions{}, err
	}
	if node, err = in.place(node); err != nil {
		return trace.SummaryOptions{}, err
	}
	if in.JobID != "" {
		if err := trace.CheckJobID(in.JobID); err != nil {
			return trace.SummaryOptions{}, fmt.Errorf("--job-id %q: %w", in.JobID, err)
		}
		job = trace.Job{ID: in.JobID, From: "flag"}
	}
	node.Host, _ = os.Hostname()
	opt := trace.SummaryOptions{Jobs: in.Jobs, UntilFirst: in.UntilFirst, Node: node, Run: in.Run, Job: job, Steps: in.Steps, Ranks: in.Ranks}
	if opt.Run == "" {
		abs, err := filepath.Abs(in.Dump)
		if err != nil {
			return opt, err
		}
		opt.Run, opt.MarkRun = abs, abs // the template, before {node} is replaced: the same on every node
		if job.Shared() {
			opt.Run = job.ID + ":" + abs
		}
	}
	if opt.Path, err = expandNode("DUMP", in.Dump, node); err != nil {
		return opt, err
	}
	if opt.Rules, err = loadRules(in.RulesFile); err != nil {
		return opt, err
	}
	return opt, nil
}

// place puts NodeIndex and Nodes over what the launcher said, and refuses
// a place that cannot be: an index below 0 or not below the count, a
// count below 1 or above trace.MaxNodes.
func (in SummarizeInputs) place(node trace.Node) (trace.Node, error) {
	switch {
	case in.NodeIndex != nil && (*in.NodeIndex < 0 || *in.NodeIndex >= trace.MaxNodes):
		return node, fmt.Errorf("--node-index %d: want a number from 0 to %d", *in.NodeIndex, trace.MaxNodes-1)
	case in.Nodes < 0 || in.Nodes > trace.MaxNodes:
		return node, fmt.Errorf("--nodes %d: want a count from 1 to %d", in.Nodes, trace.MaxNodes)
	}
	if in.NodeIndex != nil {
		node.Index = *in.NodeIndex
	}
	if in.Nodes > 0 {
		node.Count = in.Nodes
	}
	if node.Count > 0 && node.Index >= node.Count {
		return node, fmt.Errorf("%s: want below %s", placeWord(in.NodeIndex != nil, "--node-index", "node index", node.Index, node),
			placeWord(in.Nodes > 0, "--nodes", "node count", node.Count, node))
	}
	return node, nil
}

// placeWord names a node's index or count and where it came from: the
// option, or the launcher's variables.
func placeWord(given bool, flag, what string, v int, node trace.Node) string {
	if given {
		return fmt.Sprintf("%s %d", flag, v)
	}
	return fmt.Sprintf("the %s %d that %s's variables give", what, v, node.Launcher)
}

// target is the file the summary goes to ("": Writer): in a folder (an
// existing one, or a path ending in /), the node's own name there, and
// the folder is where the nodes of the job leave their marks.
func (in SummarizeInputs) target(opt *trace.SummaryOptions) (string, error) {
	if in.Output == "" {
		return "", nil
	}
	file, err := expandNode("-o", in.Output, opt.Node)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(file); (err == nil && fi.IsDir()) || strings.HasSuffix(file, "/") {
		if err := os.MkdirAll(file, 0o755); err != nil {
			return "", err
		}
		opt.Shared = file // where the other nodes' marks are
		name, err := summaryName(opt.Node, opt.Path)
		if err != nil {
			return "", err
		}
		file = filepath.Join(file, name)
	}
	opt.Target = file
	return file, nil
}

// summaryName is the file a node writes in a shared folder: by its index
// when the launcher or NodeIndex gives one, else by its host and the
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

// expandNode replaces {node} in the input named what by the node's index,
// the one its summary's header records; without an index it is refused.
func expandNode(what, s string, n trace.Node) (string, error) {
	if !strings.Contains(s, "{node}") {
		return s, nil
	}
	if n.Index < 0 {
		return "", fmt.Errorf("%s %q: {node} needs this node's index, and no launcher's variable (RANK, SLURM_PROCID, JOB_COMPLETION_INDEX, OMPI_COMM_WORLD_RANK, PMI_RANK, ...) gives one: give --node-index", what, s)
	}
	return strings.ReplaceAll(s, "{node}", strconv.Itoa(n.Index)), nil
}
