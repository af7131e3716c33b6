package trace

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/callsize"
	"github.com/nanhunt/nanhunt/internal/fsjson"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/safeio"
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
	// MarkRun names the run the marks in Shared are kept under (empty:
	// Run): Run without the job's id when Run was made from it, so that a
	// mark an earlier job left under the same dump path is found, and
	// removed.
	MarkRun string
	// Node is recorded in the header, to name what is missing at the join.
	Node Node
	// UntilFirst is the first of two phases: no details (tensor rows,
	// stacks, chains) are read, so the summary stays as small and cheap as
	// it can be; a second pass with Steps set to the steps the join names
	// (Plan.DetailSteps) reads them.
	UntilFirst bool
	// Shared, when set, is a folder the summarising processes of the run
	// share (the one they write to). A process that sees an anomaly last
	// leaves a mark there, and the others of the same Job stop after the
	// step it names: no later step can change the verdict, whichever node
	// reads it. Marks of the run that another job left are removed.
	Shared string
	// Target, when set, is the file the summary is written to: when it
	// holds a summary of another run, node, dump folder or selection,
	// Summarize writes nothing and says so.
	Target string
	// Job is the launch this process belongs to. Marks are left and
	// followed only when its id is shared by the nodes (Job.Shared); an
	// empty Job is replaced by one made here (MadeJob), which leaves none.
	Job Job
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
	// Job is the job the summary records; MarksOff is set when a shared
	// folder was given but marks were neither left nor followed, for want
	// of a job id the nodes share.
	Job      Job
	MarksOff bool
	// RemovedMarks are the marks of the run another job left in the
	// shared folder, which were removed.
	RemovedMarks []string
}

// summaryHeader is the first line of a summary. Its paths, and the run
// (by default the dump path), are written byte for byte (fsjson).
type summaryHeader struct {
	Schema   string        `json:"schema"`
	Run      fsjson.String `json:"run"`
	DumpPath fsjson.String `json:"dump_path"` // the dump root on the node
	Node     Node          `json:"node"`
	Job      Job           `json:"job"`
	Rules    string        `json:"rules"` // fingerprint of the user's rules ("" none)
	Details  bool          `json:"details"`
	Steps    []int         `json:"steps"`           // the steps asked for (nil all)
	Dirs     []summaryDir  `json:"dirs"`            // every rank folder present
	Notes    []summaryNote `json:"notes,omitempty"` // what is odd about the node's folders; Dir relative to the root
	// NamedBrief: the records keep of the ranks their group_ranks lists
	// name only what the job's ranks need without a rank selection
	// (namedInBrief)
	NamedBrief bool `json:"named_brief,omitempty"`
}

// summaryNote is a dumplayout.Note as a header holds it, its folder byte for
// byte.
type summaryNote struct {
	Dir  fsjson.String `json:"Dir"`
	Text string        `json:"Text"`
}

// summaryDir is one rank folder of a node: its dump.json is Dir/dump.json.
type summaryDir struct {
	Mode      string        `json:"mode,omitempty"`
	Step      int           `json:"step"`
	Rank      int           `json:"rank"`
	Dir       fsjson.String `json:"dir"`
	Stack     bool          `json:"stack,omitempty"`
	Construct bool          `json:"construct,omitempty"`
	NoDump    bool          `json:"no_dump,omitempty"` // the folder held no dump.json: no record follows for it
}

// rankDir is the rank folder as a join lists it (rankDirOf), its folder
// under the dump root of the node.
func (d summaryDir) rankDir(root string) dump.RankDir {
	r := record{Dir: d.Dir}
	absPaths(&r, root)
	return dump.RankDir{Mode: d.Mode, Step: d.Step, Rank: d.Rank, Dir: string(r.Dir), NoDump: d.NoDump}
}

// summaryEnd is the last line of a summary. A node that read no step after
// StoppedAfter says why; Mark names the mark of another node of the job
// that stopped it (nil: its own ranks showed an anomaly that lasts).
type summaryEnd struct {
	Records      int      `json:"records"`
	StoppedAfter *int     `json:"stopped_after,omitempty"`
	Why          string   `json:"why,omitempty"`
	Mark         *markRef `json:"mark,omitempty"`
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
	sm, h, err := newSummarizer(ctx, opt, w)
	if err != nil {
		return SummaryStats{}, err
	}
	if err := checkTarget(opt.Target, h); err != nil {
		return SummaryStats{}, err
	}
	defer sm.a.ahead.stop()
	if err := sm.enc.Encode(summaryLine{Header: h}); err != nil {
		return sm.st, err
	}
	for _, mode := range sm.layout.Modes() {
		if err := sm.mode(mode); err != nil {
			return sm.st, err
		}
	}
	sm.end.Records = sm.st.Records
	if err := sm.enc.Encode(summaryLine{End: &sm.end}); err != nil {
		return sm.st, err
	}
	if err := sm.cw.w.(*bufio.Writer).Flush(); err != nil {
		return sm.st, err
	}
	st := sm.st
	st.Steps, st.Written, st.StoppedAfter, st.Why = sortedKeys(sm.steps), sm.cw.n, sm.end.StoppedAfter, sm.end.Why
	return st, nil
}

// summarizer writes one summary.
type summarizer struct {
	opt    SummaryOptions
	layout *dump.Layout
	dirs   []dump.RankDir
	rel    func(string) string
	a      *analysis
	marks  markBoard
	cw     *countWriter
	enc    *json.Encoder
	end    summaryEnd
	steps  map[int]bool
	st     SummaryStats
}

// newSummarizer reads the layout under opt.Path and makes the header of
// its summary.
func newSummarizer(ctx context.Context, opt SummaryOptions, w io.Writer) (*summarizer, *summaryHeader, error) {
	layout, err := dump.Discover(opt.Path)
	if err != nil {
		return nil, nil, err
	}
	pol, err := policy.New(opt.Rules)
	if err != nil {
		return nil, nil, err
	}
	root, err := filepath.Abs(layout.Root)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", layout.Root, err)
	}
	if opt.Run == "" {
		opt.Run = root
	}
	if opt.Job.ID == "" {
		opt.Job = MadeJob()
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	sm := &summarizer{opt: opt, layout: layout, dirs: layout.Select(opt.Steps, opt.Ranks), rel: relTo(root),
		a: &analysis{ctx: ctx, pol: pol, jobs: jobs}, steps: map[int]bool{}}
	// marks bound a full read only: a second pass (Steps) reads what it is given
	if len(opt.Steps) == 0 {
		sm.marks = markBoard{dir: opt.Shared, run: cmp.Or(opt.MarkRun, opt.Run), job: opt.Job}
	}
	sm.st.Job, sm.st.MarksOff = opt.Job, sm.marks.dir != "" && !sm.marks.on()
	sm.cw = &countWriter{w: bufio.NewWriterSize(w, 64<<10)}
	sm.enc = json.NewEncoder(sm.cw)
	return sm, sm.header(root), nil
}

// header is the summary's first line.
func (sm *summarizer) header(root string) *summaryHeader {
	opt := sm.opt
	h := &summaryHeader{NamedBrief: opt.Ranks == nil, Schema: SummarySchema, Run: fsjson.String(opt.Run), DumpPath: fsjson.String(root), Node: opt.Node, Job: opt.Job,
		Rules: RulesFingerprint(opt.Rules), Details: !opt.UntilFirst, Steps: sortedKeys(opt.Steps), Dirs: []summaryDir{}}
	for _, n := range sm.layout.Notes {
		h.Notes = append(h.Notes, summaryNote{Dir: fsjson.String(sm.rel(n.Dir)), Text: n.Text})
	}
	for _, d := range sm.dirs {
		h.Dirs = append(h.Dirs, summaryDir{Mode: d.Mode, Step: d.Step, Rank: d.Rank, Dir: fsjson.String(sm.rel(d.Dir)), Stack: d.Stack != "", Construct: d.Construct != "", NoDump: d.NoDump})
	}
	return h
}

// mode summarises the steps of one execution mode in order, until an
// anomaly lasts (its own, or another node's by a mark of the job).
func (sm *summarizer) mode(mode string) error {
	byStep := map[int][]dump.RankDir{}
	var order []int
	for _, d := range sm.dirs {
		if d.Mode != mode || d.NoDump {
			continue // a folder without dump.json is in the header, with no record
		}
		if byStep[d.Step] == nil {
			order = append(order, d.Step)
		}
		byStep[d.Step] = append(byStep[d.Step], d)
	}
	sort.Ints(order)
	prevAnomalous := false
	for k, step := range order {
		after, by, marked, removed := sm.marks.earliest(mode)
		sm.st.RemovedMarks = append(sm.st.RemovedMarks, removed...)
		if marked && step > after {
			sm.stop(after, fmt.Sprintf("%s saw an anomaly last into step %d (a mark of job %s): no later step can change the verdict", by.Node, after, by.Job), &by)
			return nil
		}
		var next []dump.RankDir
		if k+1 < len(order) {
			next = byStep[order[k+1]]
		}
		anomalous, err := sm.step(byStep[step], next)
		if err != nil {
			return err
		}
		sm.steps[step] = true
		if prevAnomalous && anomalous && len(sm.opt.Steps) == 0 {
			// an anomaly that lasts: the verdict's step is this one or an
			// earlier one, and nothing after it is read
			sm.stop(step, "an anomaly lasted into this step: no later step can change the verdict", nil)
			sm.marks.leave(mode, step, sm.opt.Node)
			return nil
		}
		prevAnomalous = anomalous
	}
	return nil
}

// stop notes that the node read no step after this one, and why; over
// several modes the last such step counts.
func (sm *summarizer) stop(after int, why string, by *markRef) {
	if sm.end.StoppedAfter == nil || after > *sm.end.StoppedAfter {
		sm.end.StoppedAfter, sm.end.Why, sm.end.Mark = &after, why, by
	}
}

// step summarises the rank folders of one step (next are those of the step
// read after it, to read ahead) and reports whether a rank holds an anomaly.
func (sm *summarizer) step(dirs, next []dump.RankDir) (bool, error) {
	scans, err := sm.a.scanStep(dirs, scanAll, next)
	if err != nil {
		return false, err
	}
	anomalous := false
	for _, rank := range sortedKeys(scans) {
		s := scans[rank]
		if s.local != nil && s.local.first != nil {
			anomalous = true
			if !sm.opt.UntilFirst {
				s.det = readDetails(s)
				measure(s)
			}
		}
		rec := s.toRecord(sm.rel)
		if sm.opt.Ranks == nil {
			rec.Groups = namedInBrief(rec.Groups)
		}
		if err := sm.enc.Encode(summaryLine{Record: &rec}); err != nil {
			return false, err
		}
		sm.st.Records++
		sm.st.DumpBytes += s.bytes
	}
	return anomalous, nil
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
	sizes, err := callsize.MeasureFile(f, info.Size(), ops)
	if err != nil {
		s.det.SizesErr = fmt.Sprintf("%s: %v", s.dir.Dump, err)
		return
	}
	for _, op := range ops {
		if _, ok := sizes[op]; !ok {
			sizes[op] = callsize.Sizes{}
		}
	}
	s.det.Sizes = sizes
}

// namedInBrief keeps, of the ranks a record's group_ranks lists name
// (namedKey), those the job's ranks need when no ranks are selected: below
// the highest of them every rank is one of the job's anyway (README 9), so
// the highest, and those the fill does not reach (negative, or at or past
// maxFilledRank). A 1,024-rank run's DP group would otherwise add some
// 600 bytes to every record. The map is copied: the scan keeps its own.
func namedInBrief(groups map[string][]int) map[string][]int {
	named, ok := groups[namedKey]
	if !ok || len(named) < 2 {
		return groups
	}
	var keep []int
	for _, r := range named[:len(named)-1] { // ascending: the last is the highest
		if r < 0 || r >= maxFilledRank {
			keep = append(keep, r)
		}
	}
	out := maps.Clone(groups)
	out[namedKey] = append(keep, named[len(named)-1])
	return out
}
