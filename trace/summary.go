package trace

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/safeio"
	"github.com/nanhunt/nanhunt/policy"
)

// SummarySchema names the summary format. A summary is JSON lines: one
// {"header": …} line, one {"record": …} line per rank and step read, and
// one {"end": …} line, so that a summary cut short still gives its header
// and every record before the cut.
const SummarySchema = "nanhunt/summary/v1"

// Node is where a summary was made, as the job launcher tells it.
type Node struct {
	Index    int    `json:"index"`              // this node's index among the summarising processes; -1 unknown
	Count    int    `json:"count"`              // how many there are; 0 unknown
	Launcher string `json:"launcher,omitempty"` // "torchrun", "slurm", "kubernetes", "mpi", or ""
	Host     string `json:"host,omitempty"`
}

// SummaryOptions says what Summarize reads.
type SummaryOptions struct {
	// Path, Steps, Ranks, Rules and Jobs are as for Run.
	Path         string
	Steps, Ranks map[int]bool
	Rules        []policy.Rule
	Jobs         int
	// Run names the run; summaries of different runs are never joined.
	// Empty: the dump root's absolute path.
	Run string
	// Node is recorded in the header, to name what is missing at the join.
	Node Node
	// UntilFirst is the first of two phases: no details (tensor rows,
	// stacks, chains) are read, so the summary stays as small and cheap as
	// it can be; a second pass with Steps set to the steps the join names
	// (Plan.DetailSteps) reads them.
	UntilFirst bool
	// Shared, when set, is a folder the summarising processes of the run
	// share (the one they write to). A process that sees an anomaly last
	// leaves a mark there, and the others stop after the step it names:
	// no later step can change the verdict, whichever node reads it.
	Shared string
}

// SummaryStats is what Summarize did.
type SummaryStats struct {
	Records   int   // rank-steps written
	Steps     []int // steps read
	DumpBytes int64 // bytes of the dump.json files read
	Written   int64 // bytes of summary written
	// StoppedAfter is the last step read when the steps after it cannot
	// change the verdict (an anomaly that lasts into the next dumped step
	// was seen): nil when every step was read.
	StoppedAfter *int
	Why          string // why it stopped there
}

// summaryHeader is the first line of a summary.
type summaryHeader struct {
	Schema   string       `json:"schema"`
	Run      string       `json:"run"`
	DumpPath string       `json:"dump_path"` // the dump root on the node
	Node     Node         `json:"node"`
	Rules    string       `json:"rules"` // fingerprint of the user's rules ("" none)
	Details  bool         `json:"details"`
	Steps    []int        `json:"steps"`           // the steps asked for (nil all)
	Dirs     []summaryDir `json:"dirs"`            // every rank folder present
	Notes    []dump.Note  `json:"notes,omitempty"` // what is odd about the node's folders; Dir relative to the root
}

// summaryDir is one rank folder of a node: its dump.json is Dir/dump.json.
type summaryDir struct {
	Mode      string `json:"mode,omitempty"`
	Step      int    `json:"step"`
	Rank      int    `json:"rank"`
	Dir       string `json:"dir"`
	Stack     bool   `json:"stack,omitempty"`
	Construct bool   `json:"construct,omitempty"`
}

func (d summaryDir) record() record {
	r := record{Mode: d.Mode, Step: d.Step, Rank: d.Rank, Dir: d.Dir, Dump: path.Join(d.Dir, "dump.json")}
	if d.Stack {
		r.Stack = path.Join(d.Dir, "stack.json")
	}
	if d.Construct {
		r.Construct = path.Join(d.Dir, "construct.json")
	}
	return r
}

type summaryEnd struct {
	Records      int    `json:"records"`
	StoppedAfter *int   `json:"stopped_after,omitempty"`
	Why          string `json:"why,omitempty"`
}

type summaryLine struct {
	Header *summaryHeader `json:"header,omitempty"`
	Record *record        `json:"record,omitempty"`
	End    *summaryEnd    `json:"end,omitempty"`
}

// RulesFingerprint identifies a rule list: summaries are joined only with
// the rules they were made with.
func RulesFingerprint(rules []policy.Rule) string {
	if len(rules) == 0 {
		return ""
	}
	b, _ := json.Marshal(rules)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// Summarize reads the rank folders under opt.Path with the rules and the
// byte search of Run and writes their summary to w. It reads the steps in
// order and stops after the next dumped step of the first anomaly that
// lasts into it: no later step can change the verdict.
func Summarize(ctx context.Context, opt SummaryOptions, w io.Writer) (SummaryStats, error) {
	var st SummaryStats
	layout, err := dump.Discover(opt.Path)
	if err != nil {
		return st, err
	}
	pol, err := policy.New(opt.Rules)
	if err != nil {
		return st, err
	}
	root, err := filepath.Abs(layout.Root)
	if err != nil {
		return st, fmt.Errorf("%s: %w", layout.Root, err)
	}
	rel := relTo(root)
	run := opt.Run
	if run == "" {
		run = root
	}
	dirs := layout.Select(opt.Steps, opt.Ranks)
	h := summaryHeader{Schema: SummarySchema, Run: run, DumpPath: root, Node: opt.Node, Rules: RulesFingerprint(opt.Rules),
		Details: !opt.UntilFirst, Steps: sortedKeys(opt.Steps), Dirs: []summaryDir{}}
	for _, n := range layout.Notes {
		h.Notes = append(h.Notes, dump.Note{Dir: rel(n.Dir), Text: n.Text})
	}
	for _, d := range dirs {
		h.Dirs = append(h.Dirs, summaryDir{Mode: d.Mode, Step: d.Step, Rank: d.Rank, Dir: rel(d.Dir), Stack: d.Stack != "", Construct: d.Construct != ""})
	}
	cw := &countWriter{w: bufio.NewWriterSize(w, 64<<10)}
	enc := json.NewEncoder(cw)
	if err := enc.Encode(summaryLine{Header: &h}); err != nil {
		return st, err
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	a := &analysis{ctx: ctx, pol: pol, jobs: jobs}
	defer a.ahead.stop()
	end := summaryEnd{}
	steps := map[int]bool{}
	for _, mode := range layout.Modes() {
		byStep := map[int][]dump.RankDir{}
		var order []int
		for _, d := range dirs {
			if d.Mode != mode {
				continue
			}
			if byStep[d.Step] == nil {
				order = append(order, d.Step)
			}
			byStep[d.Step] = append(byStep[d.Step], d)
		}
		sort.Ints(order)
		prevAnomalous := false
		for k, step := range order {
			if len(opt.Steps) == 0 {
				if after, who, ok := lastingMark(opt.Shared, run, mode); ok && step > after {
					a := after
					end.StoppedAfter, end.Why = &a, fmt.Sprintf("%s saw an anomaly last into step %d: no later step can change the verdict", who, after)
					break
				}
			}
			var next []dump.RankDir
			if k+1 < len(order) {
				next = byStep[order[k+1]]
			}
			scans, err := a.scanStep(byStep[step], scanAll, next)
			if err != nil {
				return st, err
			}
			anomalous := false
			for _, rank := range sortedKeys(scans) {
				s := scans[rank]
				if s.local != nil && s.local.first != nil {
					anomalous = true
					if !opt.UntilFirst {
						s.det = readDetails(s)
						measure(s)
					}
				}
				rec := s.toRecord(rel)
				if err := enc.Encode(summaryLine{Record: &rec}); err != nil {
					return st, err
				}
				st.Records++
				st.DumpBytes += s.bytes
			}
			steps[step] = true
			if prevAnomalous && anomalous && len(opt.Steps) == 0 {
				// an anomaly that lasts: the verdict's step is this one
				// or an earlier one, and nothing after it is read
				s := step
				if end.StoppedAfter == nil || s > *end.StoppedAfter {
					end.StoppedAfter = &s
				}
				end.Why = "an anomaly lasted into this step: no later step can change the verdict"
				markLasting(opt.Shared, run, mode, step, opt.Node)
				break
			}
			prevAnomalous = anomalous
		}
	}
	end.Records = st.Records
	if err := enc.Encode(summaryLine{End: &end}); err != nil {
		return st, err
	}
	if err := cw.w.(*bufio.Writer).Flush(); err != nil {
		return st, err
	}
	st.Steps, st.Written, st.StoppedAfter, st.Why = sortedKeys(steps), cw.n, end.StoppedAfter, end.Why
	return st, nil
}

// relTo makes paths relative to root ("" stays "").
func relTo(root string) func(string) string {
	return func(p string) string {
		if p == "" {
			return ""
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		r, err := filepath.Rel(root, abs)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return abs
		}
		return filepath.ToSlash(r)
	}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// measure sizes the ops of a rank's named calls, for the plan a joined
// verdict makes.
func measure(s *rankScan) {
	l := s.local
	var ops []string
	for _, ev := range []*event{l.root, l.first, l.firstNaN} {
		if ev != nil {
			if op := dump.ParseName(ev.name).Op(); !slices.Contains(ops, op) {
				ops = append(ops, op)
			}
		}
	}
	f, err := safeio.Open(s.dir.Dump)
	if err != nil {
		s.det.SizesErr = err.Error()
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		s.det.SizesErr = err.Error()
		return
	}
	sizes, err := dump.MeasureFile(f, info.Size(), ops)
	if err != nil {
		s.det.SizesErr = fmt.Sprintf("%s: %v", s.dir.Dump, err)
		return
	}
	for _, op := range ops {
		if _, ok := sizes[op]; !ok {
			sizes[op] = dump.CallSizes{}
		}
	}
	s.det.Sizes = sizes
}

// lastingMark is a mark of the run is a small file in the shared folder:
// .nanhunt-lasting-<run>-<node>, holding the mode and the step after which
// no step can change the verdict.
type lastingMarkFile struct {
	Run   string `json:"run"`
	Mode  string `json:"mode"`
	After int    `json:"after"`
	Node  string `json:"node"`
}

func markPrefix(run string) string {
	h := sha256.Sum256([]byte(run))
	return ".nanhunt-lasting-" + hex.EncodeToString(h[:6]) + "-"
}

// markLasting leaves the mark of a lasting anomaly for the other nodes;
// a mark that cannot be written only costs them the steps after it.
func markLasting(dir, run, mode string, after int, n Node) {
	if dir == "" {
		return
	}
	who := n.Host
	if n.Index >= 0 {
		who = "node " + strconv.Itoa(n.Index)
	}
	b, _ := json.Marshal(lastingMarkFile{Run: run, Mode: mode, After: after, Node: who})
	name := strings.NewReplacer("/", "_", " ", "_").Replace(who)
	f, err := os.CreateTemp(dir, ".tmp-mark-*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, markPrefix(run)+name+".json")); err != nil {
		os.Remove(f.Name())
	}
}

// lastingMark is the earliest step after which another node of the run
// saw an anomaly last, in this mode.
func lastingMark(dir, run, mode string) (after int, who string, ok bool) {
	if dir == "" {
		return 0, "", false
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, "", false
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), markPrefix(run)) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || len(b) > 4096 {
			continue
		}
		var m lastingMarkFile
		if json.Unmarshal(b, &m) != nil || m.Run != run || m.Mode != mode {
			continue
		}
		if !ok || m.After < after {
			after, who, ok = m.After, m.Node, true
		}
	}
	return after, who, ok
}
