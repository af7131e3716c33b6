package trace

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/dumplayout"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"
)

// Options says what to analyse.
type Options struct {
	// Path is a dump_path, a step folder, a rank folder or a dump.json.
	Path string
	// Steps and Ranks restrict the analysis; nil means all.
	Steps, Ranks map[int]bool
	// Rules are added to the built-in rules of package policy.
	Rules []policy.Rule
	// Jobs bounds how many files are read at once (0: one per CPU).
	Jobs int
	// Strict reports the first anomaly even when the next dumped step no
	// longer shows it. By default such a step (an overflow the loss scaler
	// skipped, a NaN batch that was dropped) is listed under Recovered and
	// the scan goes on to the first anomaly that lasts.
	Strict bool
	// Summaries, when set, are the summaries (nanhunt/summary/v1 files)
	// to join instead of reading Path: the verdict is the one the rank
	// folders they summarise give in one place.
	Summaries []string
	// Progress, when set, receives a snapshot about five times a second
	// while the analysis runs, and a last one (Final set) at its end.
	Progress func(Progress)
	// Expected are ranks of the job known from outside the folders read
	// (a watch: the ranks it saw at other steps): like a rank with a
	// folder at some analysed step, each is expected at every step, and
	// a step without its folder is not read whole (README "How it
	// decides", 9).
	Expected []int
	// Timeline reads the first origin rank's dump.json of the origin step
	// once more for the calls around the root op (origin.timeline, which
	// the HTML page shows): one more read of one file, asked for by whoever
	// writes a page or keeps the verdict to render one later.
	Timeline bool
	// NoAhead leaves the warnings before the NaN unsearched (Ahead null),
	// for a caller that judges them itself with the steps before (AheadAt:
	// a watch reads one step at a time).
	NoAhead bool
	// Decided, when set, is called once the dump has decided the verdict,
	// before the warnings before the NaN and the timeline are read, with
	// the verdict (not to be changed) and a lookup of a rank's dump.json
	// at a step in the layout read (the first folder that holds them, as
	// plan.FromDump finds it; none in a join of summaries): a caller may
	// start what needs only the origin, sizing the follow-up dump,
	// meanwhile, without listing the dump's folders again.
	Decided func(v *verdict.Verdict, dumpOf func(step, rank int) (string, bool))
}

// Run analyses a dump and returns the verdict (without a plan: package plan
// makes it). It fails only when there is nothing it can read; damaged or
// missing files become warnings.
func Run(ctx context.Context, opt Options) (*verdict.Verdict, error) {
	var rs *recordSet
	var layout *dump.Layout
	var err error
	if len(opt.Summaries) > 0 {
		if rs, err = loadSummaries(opt.Summaries, opt.Rules); err != nil {
			return nil, err
		}
		defer rs.close()
		if opt.Ranks != nil && rs.namedBrief {
			why := "the summaries keep of the ranks a process group names only the highest (they were made without --ranks): with --ranks, a rank asked about that only a process group names may be missing from the ranks not dumped"
			rs.warnings, rs.lower = append(rs.warnings, why), append(rs.lower, why)
		}
		layout = &dump.Layout{Root: rs.root, Dirs: rs.dirs}
		layout.Warnings = append(dumplayout.SortNotes(rs.notes, func(d string) string { return d }), dumplayout.Gaps(rs.dirs)...)
		layout.Warnings = append(layout.Warnings, rs.warnings...)
		if opt.Path == "" {
			opt.Path = rs.root
		}
	} else if layout, err = dump.Discover(opt.Path); err != nil {
		return nil, err
	}
	dirs := layout.Select(opt.Steps, opt.Ranks)
	if len(dirs) == 0 {
		steps, ranks := map[int]bool{}, map[int]bool{}
		for _, d := range layout.Dirs {
			steps[d.Step], ranks[d.Rank] = true, true
		}
		return nil, fmt.Errorf("%s: no rank folder matches the requested steps and ranks; the dump has steps %s, ranks %s",
			opt.Path, notation.FormatRanges(sortedKeys(steps)), notation.FormatRanges(sortedKeys(ranks)))
	}
	pol, err := policy.New(opt.Rules)
	if err != nil {
		return nil, err
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}

	prog := newProgress(opt.Progress, dirs)
	if prog != nil {
		stop, done := make(chan struct{}), make(chan struct{})
		go prog.run(stop, done)
		defer func() { close(stop); <-done }()
	}
	var best *modeResult
	_, byMode := groupBy(dirs, func(d *dump.RankDir) string { return d.Mode })
	for _, mode := range layout.Modes() {
		md := byMode[mode]
		if len(md) == 0 {
			continue
		}
		a := &analysis{ctx: ctx, pol: pol, jobs: jobs, strict: opt.Strict, prog: prog, recs: rs, selected: opt.Ranks, expected: opt.Expected}
		res, err := a.mode(mode, md, emptySteps(layout, opt.Steps, opt.Ranks))
		a.ahead.stop()
		if err != nil {
			return nil, err
		}
		if best == nil || res.earlierThan(best) {
			best = res
		}
	}
	if best.readable == 0 {
		return nil, &UnreadableError{Path: opt.Path, Problems: best.warnings}
	}
	if best.hit == nil && best.tensors > 0 && best.stats == 0 && !best.nanCheck {
		return nil, fmt.Errorf("%s: no tensor has Max/Min statistics (summary_mode \"xor\" or \"md5\" only): NaN/Inf cannot be decided; dump again with \"summary_mode\": \"statistics\"", opt.Path)
	}
	v := best.verdict()
	v.Scanned.Path = verdict.Path(opt.Path)
	if opt.Decided != nil {
		opt.Decided(v, dumpOf(layout, len(opt.Summaries) == 0))
	}
	if len(opt.Summaries) == 0 && !opt.NoAhead {
		// a join has the summaries, not the files
		var warns []verdict.Warning
		v.Ahead, warns = findAhead(ctx, v, modeDirs(dirs, best.mode), pol, jobs)
		v.Warnings = append(v.Warnings, warns...)
	}
	if opt.Timeline && len(opt.Summaries) == 0 && v.Origin != nil {
		// a join has the summaries, not the files
		var hid *hiddenFound
		if v.Origin.Timeline, hid, err = timeline(ctx, v, layout, opt.Path, best.hit.indentOf); err != nil {
			return nil, err
		}
		if hid != nil && hid.explanation != nil {
			v.Explanations = append([]verdict.Explanation{*hid.explanation}, v.Explanations...)
			hiddenAdvice(v, hid.hider)
		}
	}
	nameLinks(v, layout, dirs)
	for _, w := range layout.Warnings {
		v.Warnings = append(v.Warnings, verdict.Warning{Message: w})
	}
	if len(layout.Modes()) > 1 {
		v.Warnings = append(v.Warnings, verdict.Warning{Message: fmt.Sprintf(
			"the dump has %d execution modes (%v); each was analysed on its own and the verdict is from %q",
			len(layout.Modes()), layout.Modes(), best.mode)})
	}
	return v, nil
}

// dumpOf looks a rank's dump.json at a step up in the layout, as
// plan.FromDump does in a layout it lists again; found only in a layout
// of folders (read, not a join's).
func dumpOf(l *dump.Layout, folders bool) func(step, rank int) (string, bool) {
	return func(step, rank int) (string, bool) {
		if !folders {
			return "", false
		}
		for _, d := range l.Select(map[int]bool{step: true}, map[int]bool{rank: true}) {
			return d.Dump, true
		}
		return "", false
	}
}

// emptySteps are the steps of the layout (of the selected steps) with no
// rank folder of the selection: those whose folder holds none or cannot be
// listed, and, with selected ranks, those holding other ranks' folders
// only. They were dumped, and the ranks expected there are unread.
func emptySteps(l *dump.Layout, steps, ranks map[int]bool) []dumplayout.EmptyStep {
	out := l.SelectEmpty(steps)
	if ranks == nil {
		return out
	}
	type key struct {
		mode string
		step int
	}
	held := map[key]bool{}
	for _, d := range l.Dirs {
		if ranks[d.Rank] {
			held[key{d.Mode, d.Step}] = true
		}
	}
	for _, d := range l.Dirs {
		if k := (key{d.Mode, d.Step}); !held[k] && (steps == nil || steps[d.Step]) {
			held[k] = true // once
			out = append(out, dumplayout.EmptyStep{Mode: d.Mode, Step: d.Step, Dir: filepath.Dir(d.Dir)})
		}
	}
	return out
}

// analysis is one run's settings, shared by the steps it reads.
type analysis struct {
	ctx      context.Context
	pol      *policy.Policy
	jobs     int
	strict   bool
	prog     *progress
	recs     *recordSet   // joined summaries to read instead of the files
	selected map[int]bool // the ranks asked about (nil: all)
	expected []int        // ranks of the job known from outside the folders read

	scanners  sync.Pool // of *scanner: their buffers serve every step
	ahead     readAhead
	slots     chan struct{} // one a file read (slot)
	slotsOnce sync.Once
}

// slot waits until fewer than jobs files are read, by the step's
// workers and the read-ahead together, and returns the call that says
// this one is read.
func (a *analysis) slot() (release func()) {
	a.slotsOnce.Do(func() { a.slots = make(chan struct{}, max(1, a.jobs)) })
	a.slots <- struct{}{}
	return func() { <-a.slots }
}

// scanner returns a worker's scanner, reused from an earlier step.
func (a *analysis) scanner() *scanner {
	if sc, ok := a.scanners.Get().(*scanner); ok {
		return sc
	}
	return newScanner(a.pol, a.prog)
}

// modeResult is the analysis of one execution mode's steps.
type modeResult struct {
	mode       string
	steps      []int
	scanned    []int
	notScanned []int
	hit        *stepResult // the first anomalous step that lasts
	prev       *stepResult // the step scanned before it: its step and ranks only (slim)
	next       *stepResult // the next dumped step, when read whole to look for the first NaN or the carrier
	files      int
	readable   int
	cleared    int
	tensors    int
	stats      int
	nanCheck   bool
	bytes      int64
	entries    int64
	warnings   []verdict.Warning
	supp       *suppressions
	recovered  []verdict.Recovered
	checked    *int     // the next dumped step, read to see that the anomaly lasts
	lower      []string // what lowers the confidence beyond the steps (joined summaries)
	states     []verdict.StepState
	// unread are the expected rank-steps of the steps the verdict rests on
	// that were not read whole; notDumped the job's ranks no step holds
	unread    []verdict.UnreadRanks
	notDumped map[int]bool
	// missingNodes are a join's nodes without a summary that could be
	// read: their ranks were expected, so the verdict is not complete
	missingNodes []verdict.MissingNode
	// undecided: the checked step showed no anomaly but was not read
	// whole, so whether the anomaly lasted cannot be told
	undecided bool
}

func (m *modeResult) earlierThan(o *modeResult) bool {
	switch {
	case m.hit == nil:
		return false
	case o.hit == nil:
		return true
	}
	return m.hit.step < o.hit.step
}

// mode reads the steps in order, all ranks of a step in parallel, and
// stops at the first step with an anomaly that lasts: when the next dumped
// step (however far) is clean and read whole, the anomaly was dropped (a
// skipped step) and the scan goes on, unless strict.
func (a *analysis) mode(mode string, dirs []dump.RankDir, empty []dumplayout.EmptyStep) (*modeResult, error) {
	m := &modeResult{mode: mode, supp: newSuppressions(), notDumped: map[int]bool{}}
	if a.recs != nil {
		m.lower = a.recs.lower
	}
	sr := a.stepReader(m, dirs, empty)
	byStep := sr.byStep
	if a.recs != nil {
		defer m.addLate(a.recs, m.mode)
	}
	for i := 0; i < len(m.steps); i++ {
		res, err := sr.read(i, false, false)
		if err != nil {
			return nil, err
		}
		if !res.anomalous {
			m.prev = res.slim()
			continue
		}
		if !a.strict && i+1 < len(m.steps) {
			whole := res.wantsNext()
			next, err := sr.read(i+1, true, whole)
			if err != nil {
				return nil, err
			}
			if !next.anomalous && next.whole() {
				m.states[len(m.states)-2].Status = "recovered"
				m.recovered = append(m.recovered, res.recovered(next.step))
				m.prev = next.slim()
				i++
				continue
			}
			if whole && next.anomalous {
				m.next = next
			}
			i++ // read already
		}
		m.hit = res
		m.notScanned = append(m.notScanned, m.steps[i+1:]...)
		for _, s := range m.steps[i+1:] {
			m.states = append(m.states, notScanned(s, byStep[s]))
		}
		break
	}
	return m, nil
}

// splitNoDump returns the rank folders of a step that hold a dump.json,
// and records the ranks of the others in job.noDump. A step without such
// folders is returned as it is, not copied.
func splitNoDump(ds []dump.RankDir, job *roster, step int) []dump.RankDir {
	n := 0
	for _, d := range ds {
		if d.NoDump {
			n++
		}
	}
	if n == 0 {
		return ds
	}
	kept := make([]dump.RankDir, 0, len(ds)-n)
	for _, d := range ds {
		if d.NoDump {
			job.noDump[step] = append(job.noDump[step], d.Rank)
		} else {
			kept = append(kept, d)
		}
	}
	return kept
}

// stepReader reads the steps of one mode for it.
type stepReader struct {
	a      *analysis
	m      *modeResult
	job    roster
	byStep map[int][]dump.RankDir
}

// stepReader lays out the steps of a mode (those whose folders hold no rank
// folder that can be read among them: dumped, and unread) in m.steps, and
// what is known of the job's ranks before any is read (README "How it
// decides", 9).
func (a *analysis) stepReader(m *modeResult, dirs []dump.RankDir, empty []dumplayout.EmptyStep) *stepReader {
	var byStep map[int][]dump.RankDir
	m.steps, byStep = groupBy(dirs, func(d *dump.RankDir) int { return d.Step })
	job := roster{known: map[int]bool{}, selected: a.selected, empty: map[int]bool{}}
	for _, e := range empty {
		if _, ok := byStep[e.Step]; !ok && e.Mode == m.mode {
			m.steps = append(m.steps, e.Step)
			byStep[e.Step] = nil
			job.empty[e.Step] = e.Unreadable
		}
	}
	sort.Ints(m.steps)
	for _, d := range dirs {
		job.known[d.Rank] = true
	}
	// a rank folder without dump.json has nothing to read: no scan is made
	// of it (a hundred thousand empty folders cost no more than their
	// numbers), and it is unread at its step
	job.noDump = map[int][]int{}
	for step, ds := range byStep {
		byStep[step] = splitNoDump(ds, &job, step)
	}
	known := a.expected
	if a.recs != nil {
		m.missingNodes = selectedMissing(a.recs.missing, a.selected)
		job.unsummarised = a.recs.unsummarised
		job.unknownRanks = unknownRanks(a.recs.missing)
		known = append(slices.Clip(known), a.recs.known...)
	}
	for _, r := range known {
		if a.selected == nil || a.selected[r] {
			job.known[r] = true
		}
	}
	return &stepReader{a: a, m: m, job: job, byStep: byStep}
}

// read analyses step i. A checking read only tells whether the step holds
// an anomaly (it stops at the first one unless whole is set); it is not
// counted as scanned when it does, nor when it does not but was not read
// whole (whether the anomaly lasted cannot be told then).
func (sr *stepReader) read(i int, checking, whole bool) (*stepResult, error) {
	a, m := sr.a, sr.m
	step := m.steps[i]
	how := scanAll
	if checking && !whole {
		how = scanUntilSevere
	}
	var next []dump.RankDir // read next whatever this step holds, unless it ends the run
	if !checking && i+1 < len(m.steps) {
		next = sr.byStep[m.steps[i+1]]
	}
	a.prog.startStep(step)
	defer a.prog.stepDone()
	scans, err := a.scanStep(sr.byStep[step], how, next)
	if err != nil {
		return nil, err
	}
	if how == scanUntilSevere {
		for rank, sc := range scans {
			if errors.Is(sc.openErr, context.Canceled) {
				delete(scans, rank)
			}
		}
	}
	res := analyseStep(step, m.mode, scans, sr.job)
	if checking && res.anomalous {
		// only that it holds an anomaly counts; what was read depends
		// on which rank found one first
		m.checked = &m.steps[i]
		m.states = append(m.states, res.state("checked", sr.byStep[step]))
		return res, nil
	}
	for _, rank := range sortedKeys(scans) {
		m.account(scans[rank])
	}
	m.unread = append(m.unread, res.unread...)
	for _, rk := range res.notDumped {
		m.notDumped[rk] = true
	}
	status := res.cleanStatus()
	switch {
	case res.anomalous:
		status = "anomaly"
	case checking && !res.whole():
		m.checked, m.undecided = &m.steps[i], true
		m.states = append(m.states, res.state(status, sr.byStep[step]))
		return res, nil
	}
	m.scanned = append(m.scanned, step)
	m.supp.addStep(res)
	m.states = append(m.states, res.state(status, sr.byStep[step]))
	return res, nil
}

// wantsNext reports whether the verdict of an anomalous step needs the
// next dumped step read whole: its origin made Inf and no NaN followed on
// the main rank, or no collective carried it to another rank.
func (r *stepResult) wantsNext() bool {
	c, _ := r.carrier()
	if c == nil {
		return true
	}
	p := r.pick()
	l := r.locals[p.main]
	return p.kind == "inf" && l.firstNaN == nil
}

// scanStep reads every rank of one step, jobs files at a time, each worker
// reusing its buffers. With scanUntilSevere, the first rank that meets an
// anomaly stops the others. With scanAll, the workers the step leaves idle
// start on next, the step the caller reads after it: those a step of fewer
// files than workers never uses, and each that runs out of the step's
// files while another still reads (readahead.go).
func (a *analysis) scanStep(dirs []dump.RankDir, mode scanMode, next []dump.RankDir) (map[int]*rankScan, error) {
	if a.recs != nil {
		return a.recs.scans(dirs, mode)
	}
	out := make([]*rankScan, len(dirs))
	early := a.ahead.take(dirs, mode) // started by the step before
	var todo []int
	for i := range dirs {
		if early[i] == nil {
			todo = append(todo, i)
		}
	}
	if mode != scanAll {
		next = nil // a checking read ends the run or is followed by nothing read ahead
	}
	if len(dirs) < a.jobs {
		a.ahead.start(a, next, a.jobs-len(dirs))
	}
	var colls collShare
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	work := make(chan int)
	g, gctx := errgroup.WithContext(ctx)
	workers := min(a.jobs, len(todo))
	var busy atomic.Int32
	busy.Store(int32(workers))
	for w := 0; w < workers; w++ {
		g.Go(func() error {
			sc := a.scanner()
			defer a.scanners.Put(sc)
			defer func() {
				if busy.Add(-1) > 0 && gctx.Err() == nil {
					a.ahead.start(a, next, 1) // the step's other files are still read
				}
			}()
			for i := range work {
				release := a.slot()
				s := sc.scanFile(gctx, dirs[i], mode)
				release()
				colls.share(s)
				a.prog.fileDone()
				out[i] = s
				if s.stopped {
					cancel()
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(work)
		for _, i := range todo {
			select {
			case work <- i:
			case <-gctx.Done():
				return nil
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, e := range early {
		if e != nil {
			<-e.done
			colls.share(e.s)
			a.prog.fileDone()
			out[i] = e.s
		}
	}
	if err := ctxErrOf(ctx, out, mode); err != nil {
		return nil, err
	}
	scans := map[int]*rankScan{}
	for _, s := range out {
		if s != nil {
			scans[s.dir.Rank] = s
		}
	}
	return scans, nil
}

// scanFile reads one rank's dump.json and finishes its scan; a file
// rewritten while it was read is read again, once.
func (sc *scanner) scanFile(ctx context.Context, rd dump.RankDir, mode scanMode) *rankScan {
	s := sc.scanRank(ctx, rd, mode)
	if s.fileChanged() {
		if again := sc.scanRank(ctx, rd, mode); !again.fileChanged() {
			s = again
		}
	}
	sc.finish(s, mode)
	return s
}

// ctxErrOf tells a cancellation by the caller from the stop of an
// early-stopping scan.
func ctxErrOf(ctx context.Context, out []*rankScan, mode scanMode) error {
	if mode == scanUntilSevere {
		for _, s := range out {
			if s != nil && s.stopped {
				return nil
			}
		}
	}
	return context.Cause(ctx)
}

// account adds a scan's size and problems to the totals.
func (m *modeResult) account(s *rankScan) {
	m.files++
	m.bytes += s.bytes
	if s.cleared {
		m.cleared++
	}
	m.tensors += s.tensors
	m.stats += max(s.stats, s.searchStats)
	m.nanCheck = m.nanCheck || s.nanCheck
	m.entries += int64(s.entries)
	file := s.dir.Dump
	switch {
	case s.openErr != nil:
		m.warnings = append(m.warnings, verdict.Warning{File: file, Message: "unreadable: " + s.openErr.Error()})
		return
	case s.damage != nil:
		off := s.damage.Offset
		msg := fmt.Sprintf("%v; the %d entries before it were analysed", s.damage, s.entries)
		if s.entries == 0 {
			msg = fmt.Sprintf("%v; nothing could be read", s.damage)
		}
		m.warnings = append(m.warnings, verdict.Warning{File: file, Offset: &off, Message: msg})
	case s.entries == 0 && !s.cleared:
		m.warnings = append(m.warnings, verdict.Warning{File: file, Message: "no entries (\"data\" is empty or absent): nothing of this rank could be read"})
	}
	if s.entries > 0 || s.cleared {
		m.readable++
	}
	if s.oddStatKeys {
		m.warnings = append(m.warnings, verdict.Warning{File: file, Message: "statistics keys are not spelled as msprobe spells them (\"max\" for \"Max\"): read all the same"})
	}
	if msg := skillFormNote(s.underscored, s.keyedEntry); msg != "" {
		m.warnings = append(m.warnings, verdict.Warning{File: file, Message: msg})
	}
	if s.changed != "" {
		m.warnings = append(m.warnings, verdict.Warning{File: file, Message: "changed while it was read (" + s.changed + "), twice: what was read may mix two versions of it"})
	}
	if s.oddStats > 0 {
		m.warnings = append(m.warnings, verdict.Warning{File: file, Message: fmt.Sprintf(
			"%d Max or Min values (the first in %s) are an object, a list or a string that is no number: NaN/Inf cannot be decided for them",
			s.oddStats, s.oddStatsEntry)})
	}
	if s.dupEntry != "" {
		m.warnings = append(m.warnings, verdict.Warning{File: file, Message: fmt.Sprintf(
			"%s has the member %q twice (a duplicate key): which one msprobe meant cannot be told; the values of both were read (of a statistic, and of a collective's arguments and output, the last)", s.dupEntry, s.dupKey)})
	}
	if s.cutEntry != "" {
		m.warnings = append(m.warnings, verdict.Warning{File: file, Message: fmt.Sprintf(
			"%s holds a string of more than 1 MiB: only its beginning was read", s.cutEntry)})
	}
	if s.mergedEntry != "" {
		m.warnings = append(m.warnings, verdict.Warning{File: file, Message: fmt.Sprintf(
			"%s holds more than %d tensors or values: %d more were summarised by field and non-finite value (none is lost, their positions are)",
			s.mergedEntry, maxKept, s.merged)})
	}
	for _, l := range s.limits {
		m.warnings = append(m.warnings, verdict.Warning{File: file, Message: "a bound of the scan was reached: " + l})
	}
	if s.tensors > 0 && s.statless > 0 && s.statless*2 >= s.entries {
		m.warnings = append(m.warnings, verdict.Warning{File: file, Message: fmt.Sprintf(
			"%d of %d calls have no Max/Min statistics (summary_mode xor or md5-only, or empty tensors): NaN/Inf cannot be decided for them",
			s.statless, s.entries)})
	}
	for _, w := range []struct {
		file string
		err  error
	}{{s.dir.Stack, s.sides.stack}, {s.dir.Construct, s.sides.construct}} {
		if w.err != nil {
			m.warnings = append(m.warnings, verdict.Warning{File: w.file, Message: "read for the phases of its calls: " + w.err.Error()})
		}
	}
}

// groupBy splits dirs by key, keeping their order, in one pass; keys are
// in order of first appearance. A group whose folders lie together (a
// layout is sorted by mode, step and rank, and a thousand ranks of a
// hundred steps are 100,000 folders) is a part of dirs itself, capped so
// that an append copies; one that lies apart is a copy.
func groupBy[K comparable](dirs []dump.RankDir, key func(*dump.RankDir) K) ([]K, map[K][]dump.RankDir) {
	var keys []K
	groups := map[K][]dump.RankDir{}
	for i := 0; i < len(dirs); {
		k := key(&dirs[i])
		j := i + 1
		for j < len(dirs) && key(&dirs[j]) == k {
			j++
		}
		if g, ok := groups[k]; ok {
			groups[k] = append(slices.Clip(g), dirs[i:j]...)
		} else {
			keys = append(keys, k)
			groups[k] = dirs[i:j:j]
		}
		i = j
	}
	return keys, groups
}

// modeDirs are the rank folders of one execution mode.
func modeDirs(dirs []dump.RankDir, mode string) []dump.RankDir {
	var out []dump.RankDir
	for _, d := range dirs {
		if d.Mode == mode {
			out = append(out, d)
		}
	}
	return out
}
