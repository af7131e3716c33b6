package trace

import (
	"context"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"sync/atomic"

	"github.com/nanhunt/nanhunt/internal/bytesearch"
	"github.com/nanhunt/nanhunt/internal/entryat"
	"github.com/nanhunt/nanhunt/internal/safeio"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// A rank scan reads one dump.json in three parts. The byte search
// (bytesearch.Prefilter) only locates: where suspects of non-finite values lie,
// where entries start, whether a backward name occurs. The plan (policy:
// PlanFile, EntryWalk) turns those places into what to parse, with the
// rule set's own severity rules. The walker (walk.go) carries the plan
// out and keeps, in bounded memory, the calls the rank's account needs
// (signs.go). Where the walk cannot answer (a search stopped short, a
// limit of the walk reached, an anomaly that may have grown from a -inf
// the walk passed over), the scan falls back to a dearer strategy, never
// the other way.

// event is a call that holds non-finite values, as a rank scan keeps it.
type event struct {
	index       int
	name        string
	offset, end int64
	dir         notation.Direction
	module      bool
	collIdx     int // index in rankScan.colls for collectives; -1 otherwise
	facts
	flagged   bool // nan_check: the overflow flag was raised
	recompute bool // "is_recompute": true

	prevClean     int    // index of the last earlier call whose outputs were finite; -1
	prevCleanName string //
	legitNeg      int    // index of the latest legitimate -inf source before it; -1

	phase policy.Phase // decided once the file is read (see phases)
}

// tailEntry is an entry after the last backward entry seen so far: where
// the optimizer starts is decided among them.
type tailEntry struct {
	name  string
	index int32
}

// syncPoint is one collective's place on a rank: its index and its
// occurrence k of its pairing base.
type syncPoint struct{ index, k int32 }

// rankScan is what one dump.json says, reduced to what the analysis needs.
type rankScan struct {
	dir     dump.RankDir
	header  dump.Header
	entries int
	bytes   int64
	openErr error
	damage  *damageAt
	lim     *scanLimits
	indent  int // json.dump's indentation, when the byte search saw it

	firstBwd, lastBwd int // indices of the first and last backward entries; -1
	lastColl          int // index of the last collective; -1
	preOps            map[string]bool
	preOpsCut         bool // more distinct ops before the first backward entry than the limit
	tail              []tailEntry
	tailCut           bool                   // more entries after the latest backward entry than the limit
	syncs             map[string][]syncPoint // every collective, by pairing base (until finish)

	events        []event
	colls         []collEvent
	suppressed    []suppression
	supIndex      map[suppressKey]int
	tensors       int
	stats         int // tensors with Max/Min
	statless      int // calls whose tensors had no Max/Min
	flagged       int // nan_check: calls with the overflow flag
	nanCheck      bool
	oddStatKeys   bool
	underscored   string          // the first entry named "{api}_{N}_{M}" (the skill's form)
	keyedEntry    string          // the first entry with a list written as an object keyed by position
	mergedEntry   string          // the first entry with more values than maxKept
	merged        int             // how many of its values were merged
	cutEntry      string          // the first entry with a string longer than the reader keeps
	oddStats      int             // Max and Min values that are no statistic
	oddStatsEntry string          // the first entry that has one
	dupEntry      string          // the first entry with a member written twice
	dupKey        string          // that member
	ident         safeio.Identity // dump.json when it was opened
	searchStats   int             // Max keys the byte search counted in the file
	changed       string          // how dump.json changed while it was read, or ""
	limits        []string        // the bounds of a reading in bounded memory it reached (see maxBases)
	inexact       bool            // one of them made the account a guess (noteInexact)
	cleared       bool            // the byte search found nothing to parse
	stopped       bool            // scanUntilSevere met an anomaly and stopped
	collsFull     bool            // more non-finite collectives than the limit
	collsLost     bool            // and those past it could not be read again (sendersAgain)
	severeSeen    bool            // a call that is certainly an anomaly was met
	wholeTo       int64           // the end of the last entry the walk read whole

	local *local                 // the rank's account, once finished
	order map[string]syncSummary // its first sign's place among the collectives, once finished
	seen  map[string]int32       // a damaged file: how many instances of each pairing base it holds

	groups map[string][]int // the process groups of its collectives, by identity
	sides  sideWarnings     // what could not be read of stack.json and construct.json
	det    *details         // its details, when it came from a summary
	// loadDet reads the details of a rank that came from a summary line
	// again, when the verdict names it: a join does not keep every rank's.
	loadDet func() *details
}

// unread reports whether nothing of the rank's dump.json could be read:
// missing, not a file, damaged before its first entry, or without entries.
func (s *rankScan) unread() bool {
	return s.openErr != nil || (s.entries == 0 && !s.cleared)
}

// noteLimit records, once, a bound the scan reached that may change what
// the verdict decides (the verdict warns).
func (s *rankScan) noteLimit(what string) {
	for _, l := range s.limits {
		if l == what {
			return
		}
	}
	s.limits = append(s.limits, what)
}

// noteInexact is noteLimit for a bound past which what the rank's account
// says is a guess (a sender inferred, a phase placed without its names):
// the confidence of an origin at its step drops.
func (s *rankScan) noteInexact(what string) {
	s.inexact = true
	s.noteLimit(what)
}

// scanMode says how much of a file a scan needs.
type scanMode uint8

const (
	// scanAll: the byte search first; a cleared file is not parsed, the
	// others are walked, parsing only collectives and the calls the search
	// flagged. The search stops at the window of the first suspect that may
	// be NaN or +Inf, as a checking read's does: past it, a walk that knows
	// the rank's first anomaly and first NaN (policy.EntryWalk.Settled)
	// parses collectives only, which need no search; a walk that does not
	// reads the file again, its search made whole.
	scanAll scanMode = iota
	// scanUntilSevere: as scanAll, but stop at the first call that is
	// certainly an anomaly (to see whether an anomaly lasts). A file it
	// reads to the end gives what scanAll gives.
	scanUntilSevere
	// scanWhole: parse every call.
	scanWhole
)

// strategy is how a scan reads a file. A scan starts with the cheapest its
// mode allows and falls back to a dearer one when the cheaper cannot
// answer (walker.walk says when), at most twice.
type strategy uint8

const (
	// searchToFirstSevere: the byte search stops after the window of the
	// first suspect that may be NaN or +Inf, then the walk; a checking read
	// (scanUntilSevere) stops at the first anomaly, which lies there when
	// that suspect is one, and a full read (scanAll) settles there.
	searchToFirstSevere strategy = iota
	// searchWhole: the byte search of the whole file, then the walk.
	searchWhole
	// parseAll: every entry is parsed, nothing is searched.
	parseAll
)

// firstStrategy is the cheapest strategy a mode allows.
func firstStrategy(mode scanMode, searchWholeFile bool) strategy {
	switch {
	case mode == scanWhole:
		return parseAll
	case !searchWholeFile:
		return searchToFirstSevere
	}
	return searchWhole
}

// scanner is what a worker reuses from file to file.
type scanner struct {
	rules  *policy.Matcher
	prog   *progress
	pf     *bytesearch.Prefilter
	at     *entryat.Reader
	groups map[string][]int // one copy of each process group's ranks
	ops    map[string]string
	rd     *dump.Reader
	lim    *scanLimits // of the scan under way
	// searchWhole: the byte search goes to the end of the file, as after
	// a search stopped short (tests)
	searchWhole bool
}

// newScanner returns a worker's scanner under the rule set p.
func newScanner(p *policy.Policy, prog *progress) *scanner {
	return &scanner{rules: p.Matcher(), prog: prog, pf: bytesearch.NewPrefilter(window, normalLimits.spans, policy.Search()),
		at: entryat.New(dump.ReaderOptions{}), groups: map[string][]int{}, ops: map[string]string{}, lim: &normalLimits}
}

// reader returns the worker's dump.json reader, reset to read src: one
// window per worker, whatever the number of files.
func (sc *scanner) reader(src io.Reader, opt dump.ReaderOptions) *dump.Reader {
	if sc.rd == nil {
		opt.WindowSize = window
		sc.rd = dump.NewReader(src, opt)
		return sc.rd
	}
	sc.rd.Reuse(src, opt)
	return sc.rd
}

// intern keeps one copy of an op name per worker. Past the limit names are
// not shared, which costs memory and nothing else.
func (sc *scanner) intern(op string) string {
	if s, ok := sc.ops[op]; ok {
		return s
	}
	if len(sc.ops) < sc.lim.interned {
		sc.ops[op] = op
	} else {
		reached.interned.Add(1)
	}
	return op
}

// newRankScan returns the empty scan of a rank folder, under the normal
// limits.
func newRankScan(rd dump.RankDir) *rankScan {
	return &rankScan{dir: rd, firstBwd: -1, lastBwd: -1, lastColl: -1, supIndex: map[suppressKey]int{}, lim: &normalLimits,
		preOps: map[string]bool{}, syncs: map[string][]syncPoint{}, groups: map[string][]int{}}
}

// scanRank reads one rank's dump.json: search, plan, walk, and the
// fallbacks the walk asks for.
func (sc *scanner) scanRank(ctx context.Context, rd dump.RankDir, mode scanMode) *rankScan {
	sc.lim = limitsOf(ctx)
	sc.pf.KeepSpans(sc.lim.spans)
	how := firstStrategy(mode, sc.searchWhole)
	for {
		s, next := sc.scanWith(ctx, rd, mode, how)
		if next <= how { // done (strategies only ever get dearer)
			return s
		}
		if how == searchToFirstSevere && next == searchWhole {
			partialRescans.Add(1)
		}
		how = next
	}
}

// partialSearches counts the searches stopped at their first severe
// suspect, partialRescans the files read again because that was not
// enough: for the tests.
var partialSearches, partialRescans atomic.Int64

// scanWith reads a rank's dump.json with one strategy. It returns the scan
// and the strategy to read the file again with, which is how itself when
// the scan is done.
func (sc *scanner) scanWith(ctx context.Context, rd dump.RankDir, mode scanMode, how strategy) (*rankScan, strategy) {
	s := newRankScan(rd)
	s.lim = sc.lim
	f, err := safeio.Open(rd.Dump)
	if err != nil {
		s.openErr = err
		return s, how
	}
	defer f.Close()
	if id, err := safeio.IdentityOf(f); err == nil {
		s.bytes, s.ident = id.Size, id
	}
	src := &ctxReader{ctx: ctx, r: f, prog: sc.prog}
	w := &walker{ctx: ctx, sc: sc, s: s, f: f, mode: mode, how: how, seen: map[string]int{}, collsOfBase: map[string]int{}, prevClean: -1, legitNeg: -1,
		signs: signs{births: sc.lim.births}}
	if how != parseAll {
		hits, err := sc.search(s, src, how)
		if err != nil {
			s.openErr = err
			return s, how
		}
		switch policy.PlanFile(hits, f, s.bytes, sc.lim.backwardProbe) {
		case policy.Clear:
			s.cleared = true
			s.nameGroupRanks(hits)
			return s, how
		case policy.ClearMasks:
			s.clearedAsMasks(hits)
			s.nameGroupRanks(hits)
			return s, how
		case policy.Walk:
			w.hits = hits
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			s.openErr = err
			return s, how
		}
	}
	hits := w.hits
	if hits == nil {
		hits = sc.pf.StartGroups()
	}
	next := w.walk(sc.pf.FollowGroups(src))
	if next == how && s.openErr == nil {
		sc.readGroupRanks(s, f, hits)
	}
	return s, next
}

// readGroupRanks finds the ranks the file's "group_ranks" lists name
// (README "How it decides", 9), after a walk that read them past where the
// search stopped (or, for a file parsed without a search, from its start):
// the lists neither reached are read now.
func (sc *scanner) readGroupRanks(s *rankScan, f *os.File, hits *bytesearch.Hits) {
	if s.damage != nil {
		// only the lists before the damage count, and the walk read to it:
		// what follows (a cut file's nothing, or gigabytes of zeros) is not read
		s.nameGroupRanks(hits)
		return
	}
	if err := sc.pf.ReadGroups(f, s.bytes); err != nil {
		s.noteInexact("the process groups of the file could not all be read (" + err.Error() + "): ranks named only there are not counted")
		return
	}
	s.nameGroupRanks(hits)
}

// namedKey holds, among a scan's groups, the ranks its file's
// "group_ranks" lists name anywhere (not a process group of its own).
const namedKey = "named"

// nameGroupRanks records the ranks of the lists the search found: in a
// damaged file, those of the entries before the damage.
func (s *rankScan) nameGroupRanks(hits *bytesearch.Hits) {
	before := int64(math.MaxInt64)
	if s.damage != nil {
		before = s.wholeTo
	}
	if hits.Groups.Cut && s.damage == nil {
		s.noteInexact("process group lists past the bounds of the byte search (more than 1,024 distinct lists, 262,144 ranks or 4 MiB of text in them): ranks named only there are not counted")
	}
	if ranks := hits.Groups.Ranks(nil, before); len(ranks) > 0 {
		s.groups[namedKey] = ranks
	}
}

// search runs the byte search over the file, to its first suspect NaN or
// +Inf or whole as the strategy says.
func (sc *scanner) search(s *rankScan, src io.Reader, how strategy) (*bytesearch.Hits, error) {
	search := sc.pf.Scan
	if how == searchToFirstSevere {
		search = sc.pf.ScanUntilSevere
	}
	hits, err := search(src)
	if err != nil {
		return nil, err
	}
	if hits.Partial {
		partialSearches.Add(1)
	}
	if len(hits.Spans) >= sc.lim.spans {
		reached.spans.Add(1)
	}
	// what the search saw of statistics counts for the files it clears and
	// for the entries the walk skips
	s.searchStats = hits.Stats
	return hits, nil
}

// clearedAsMasks records a file cleared because its only suspects are -inf
// in forward calls before its last backward entry.
func (s *rankScan) clearedAsMasks(hits *bytesearch.Hits) {
	s.cleared = true
	const why = "-inf in forward calls only (masks, or -inf that never became NaN or +inf); file cleared without parsing"
	for _, op := range slices.Sorted(maps.Keys(hits.ForwardOps)) {
		s.suppressN(op, why, nonfinite.NegInf, op, false, hits.ForwardOps[op])
	}
	if hits.OtherForwardOps > 0 {
		s.suppressN(otherOps, why, nonfinite.NegInf, otherOps, false, hits.OtherForwardOps)
	}
}

// ctxReader stops reading when the context is cancelled, and counts what
// it reads for the progress display.
type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	prog *progress
}

// Read reads from the file unless the context is done.
func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.prog.read(n)
	return n, err
}

// windowFor sizes the parser's read window: the whole file when it is small
// (a large window cleared for a 100 kB file costs more than reading it).
func windowFor(size int64) int {
	const lo = 16 << 10
	return int(min(max(size+1, lo), window))
}

// window is the read buffer of each worker's byte search and parser: large
// enough that reads cost nothing next to the work on the bytes, small
// enough that a worker per core stays within a few MB.
const window = 256 << 10
