package trace

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"sync/atomic"

	"github.com/nanhunt/nanhunt/internal/safeio"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/nonfinite"
	"github.com/nanhunt/nanhunt/policy"
)

// event is a call that holds non-finite values, as a rank scan keeps it.
type event struct {
	index       int
	name        string
	offset, end int64
	dir         dump.Direction
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

// Caps on what one rank scan keeps, so memory does not grow with the file.
const (
	maxSevereEvents = 256
	maxNegEvents    = 1024
	maxCollEvents   = 64
	maxSuppressKeys = 64
	maxPreOps       = 1 << 13 // distinct ops before the first backward entry
	maxTail         = 1 << 16 // entries after the last backward entry
	maxBases        = 4096    // pairing bases (group and api, or peers) followed per rank
)

// tailEntry is an entry after the last backward entry seen so far: where
// the optimizer starts is decided among them.
type tailEntry struct {
	name  string
	index int32
	coll  bool
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

	firstBwd, lastBwd int // indices of the first and last backward entries; -1
	lastColl          int // index of the last collective; -1
	preOps            map[string]bool
	preOpsFull        bool
	tail              []tailEntry
	tailFull          bool
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
	mergedEntry   string          // the first entry with more values than dump.MaxKept
	merged        int             // how many of its values were merged
	cutEntry      string          // the first entry with a string longer than the reader keeps
	oddStats      int             // Max and Min values that are no statistic
	oddStatsEntry string          // the first entry that has one
	dupEntry      string          // the first entry with a member written twice
	dupKey        string          // that member
	ident         safeio.Identity // dump.json when it was opened
	searchStats   int             // Max keys the byte search counted in the file
	changed       string          // how dump.json changed while it was read, or ""
	severeKept    int
	negKept       int
	cleared       bool // the byte search found nothing to parse
	stopped       bool // scanUntilSevere met an anomaly and stopped
	collsFull     bool // more non-finite collectives than maxCollEvents
	severeSeen    bool // a call that is certainly an anomaly was met
	deferredLost  bool // more deferred -inf calls than maxDeferred

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

type suppressKey struct {
	op, reason string
	values     nonfinite.Class
}

// suppression is a group of calls an exclusion rule changed.
type suppression struct {
	suppressKey
	first string // first entry name
	count int
	birth bool
}

// scanMode says how much of a file a scan needs.
type scanMode uint8

const (
	// scanAll: the byte search first; a cleared file is not parsed, the
	// others are walked, parsing only collectives and the calls the search
	// flagged.
	scanAll scanMode = iota
	// scanUntilSevere: as scanAll, but stop at the first call that is
	// certainly an anomaly (to see whether an anomaly lasts). A file it
	// reads to the end gives what scanAll gives.
	scanUntilSevere
	// scanWhole: parse every call.
	scanWhole
)

// scanner is what a worker reuses from file to file.
type scanner struct {
	rules  *policy.Matcher
	prog   *progress
	pf     *dump.Prefilter
	at     *dump.EntryAt
	groups map[string][]int // one copy of each process group's ranks
	ops    map[string]string
	rd     *dump.Reader
	// searchWhole: the byte search of a checking read goes to the end of
	// the file (scanRankSearched)
	searchWhole bool
}

func newScanner(p *policy.Policy, prog *progress) *scanner {
	return &scanner{rules: p.Matcher(), prog: prog, pf: dump.NewPrefilter(window, 1<<14, policy.Search()),
		at: dump.NewEntryAt(dump.ReaderOptions{}), groups: map[string][]int{}, ops: map[string]string{}}
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

// intern keeps one copy of an op name per worker.
func (sc *scanner) intern(op string) string {
	if s, ok := sc.ops[op]; ok {
		return s
	}
	if len(sc.ops) < 1<<16 {
		sc.ops[op] = op
	}
	return op
}

func newRankScan(rd dump.RankDir) *rankScan {
	return &rankScan{dir: rd, firstBwd: -1, lastBwd: -1, lastColl: -1, supIndex: map[suppressKey]int{},
		preOps: map[string]bool{}, syncs: map[string][]syncPoint{}, groups: map[string][]int{}}
}

// scanRank reads one rank's dump.json.
func (sc *scanner) scanRank(ctx context.Context, rd dump.RankDir, mode scanMode) *rankScan {
	s := newRankScan(rd)
	f, err := safeio.Open(rd.Dump)
	if err != nil {
		s.openErr = err
		return s
	}
	defer f.Close()
	if id, err := safeio.IdentityOf(f); err == nil {
		s.bytes, s.ident = id.Size, id
	}
	src := &ctxReader{ctx: ctx, r: f, prog: sc.prog}
	opt := dump.ReaderOptions{WindowSize: windowFor(s.bytes)}
	var hits *dump.Hits
	if mode != scanWhole {
		if mode == scanUntilSevere && !sc.searchWhole {
			// what the walk needs to stop at the first anomaly; it reads the
			// file again whole if the suspects searched are not one (partial)
			hits, err = sc.pf.ScanUntilSevere(src)
		} else {
			hits, err = sc.pf.Scan(src)
		}
		if err != nil {
			s.openErr = err
			return s
		}
		if hits.Partial {
			partialSearches.Add(1)
		}
		// what the search saw of statistics counts for the files it
		// clears and for the entries the walk skips
		s.searchStats = hits.Stats
		if policy.NoSuspects(hits) {
			s.cleared = true
			return s
		}
		if sc.onlyMasks(f, s.bytes, hits) {
			s.cleared = true
			for _, op := range slices.Sorted(maps.Keys(hits.ForwardOps)) {
				s.suppressN(op, "-inf in forward calls only (masks, or -inf that never became NaN or +inf); file cleared without parsing",
					nonfinite.NegInf, op, false, hits.ForwardOps[op])
			}
			return s
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			s.openErr = err
			return s
		}
		if (!hits.Whole && !hits.Partial) || (hits.Tensors > 0 && hits.Stats == 0) {
			hits = nil // damaged or stat-less: read every call, to say what is wrong
		}
	}
	var w *walk
	if hits != nil {
		w = &walk{hits: hits}
		opt.Select = w.choose
		if hits.Located {
			opt.Indent = hits.Indent // the skipped calls are passed over by their closing lines
		}
	}
	var deferred []span
	rd2 := sc.reader(src, opt)
	seen := map[string]int{}
	prevClean, prevName := -1, ""
	legitNeg := -1
	for rd2.Next() {
		e := rd2.Entry()
		if hits != nil && hits.Partial && e.End > hits.Searched {
			return sc.scanRankSearched(ctx, rd, mode) // past what was searched, and no anomaly yet
		}
		s.entries++
		n := dump.ParseName(e.Name)
		if n.UnderscoreCounters && s.underscored == "" {
			s.underscored = e.Name
		}
		s.place(sc, e, n)
		if e.Skipped {
			if w.settled {
				continue
			}
			maskSkip := w.maskSkip
			if maskSkip && hits.FirstSevere >= e.Offset && hits.FirstSevere < e.End {
				maskSkip = false // it holds the first suspect NaN or +inf: parse it
			}
			if maskSkip && s.firstBwd >= 0 && w.within(e.Offset, e.End) {
				// after a backward entry, a forward call may lie after the last
				// one, where -inf is an anomaly: decided at the end
				if len(deferred) < maxDeferred {
					deferred = append(deferred, span{e.Index, e.Offset, e.End})
				} else {
					s.deferredLost = true
				}
			}
			if maskSkip || !w.within(e.Offset, e.End) {
				prevClean, prevName = e.Index, e.Name // nothing non-finite in its bytes, or a mask
				continue
			}
			// A suspect in a call skipped by the guess above: parse it from
			// the read window, or read it again.
			var full *dump.Entry
			if raw := rd2.Raw(); raw != nil {
				full, err = sc.at.Parse(raw, e.Offset)
			} else {
				full, err = sc.at.Read(f, e.Offset, e.End)
			}
			if err != nil {
				s.openErr = err
				return s
			}
			full.Index = e.Index
			e = full
		}
		if e.IsNaN >= 0 {
			s.nanCheck = true
		}
		s.oddStatKeys = s.oddStatKeys || e.OddStatKeys
		if e.KeyedByIndex && s.keyedEntry == "" {
			s.keyedEntry = e.Name
		}
		if e.OddStats > 0 {
			if s.oddStats == 0 {
				s.oddStatsEntry = e.Name
			}
			s.oddStats += e.OddStats
		}
		if e.DuplicateKey != "" && s.dupEntry == "" {
			s.dupEntry, s.dupKey = e.Name, e.DuplicateKey
		}
		if e.CutStrings > 0 && s.cutEntry == "" {
			s.cutEntry = e.Name
		}
		if e.Merged > 0 && s.mergedEntry == "" {
			s.mergedEntry, s.merged = e.Name, e.Merged
		}
		ev := event{index: e.Index, dir: passOf(n), module: n.Module, collIdx: -1, prevClean: prevClean, prevCleanName: prevName,
			legitNeg: legitNeg, flagged: e.IsNaN == 1, recompute: e.Recompute}
		keep := false
		var outClean bool
		if n.IsDistributed() {
			ce := readCollective(e, n, s.dir.Rank, seen)
			s.sync(&ce, n)
			if ce.group != nil {
				if g, ok := sc.groups[ce.groupKey]; ok {
					ce.group = g
				} else {
					sc.groups[ce.groupKey] = ce.group
				}
				if _, ok := s.groups[ce.groupKey]; !ok && len(s.groups) < 1024 {
					s.groups[ce.groupKey] = ce.group
				}
			}
			if ce.ignored != 0 {
				s.suppress(n.Op(), policy.ReasonReceiveBuffer, ce.ignored, e.Name, false)
			}
			outClean = ce.dest == 0
			if ce.send|ce.dest != 0 {
				if len(s.colls) < maxCollEvents {
					ev.collIdx = len(s.colls)
					s.colls = append(s.colls, ce)
					keep = true
				} else {
					s.collsFull = true
				}
			}
		} else {
			ev.facts = classify(e, n, sc.rules)
			s.tensors += ev.tensors
			s.stats += ev.stats
			if ev.statless {
				s.statless++
			}
			for _, h := range ev.suppress {
				if h.birth || h.input {
					s.suppress(n.Op(), h.reason, h.values, e.Name, h.birth)
				}
				if h.birth && h.values&nonfinite.NegInf != 0 {
					legitNeg = e.Index
				}
			}
			if ev.negConst {
				legitNeg = e.Index
			}
			outClean = ev.out == 0
			keep = s.keepEvent(&ev, n)
		}
		if ev.flagged {
			s.flagged++
			keep = true
		}
		if keep {
			ev.name = e.Name
			ev.offset, ev.end = e.Offset, e.End
			s.events = append(s.events, ev)
			last := &s.events[len(s.events)-1]
			if s.certainlySevere(last) {
				if mode == scanUntilSevere {
					s.stopped = true
					return s
				}
				s.severeSeen = true
			}
			if out := last.out | s.destOf(last); out&nonfinite.NaN != 0 && s.severeSeen && w != nil {
				w.settled = true
			}
		}
		if e.HasOutput && outClean {
			prevClean, prevName = e.Index, e.Name
		}
	}
	if hits != nil && hits.Partial {
		return sc.scanRankSearched(ctx, rd, mode) // the suspects searched were no anomaly
	}
	if err := rd2.Err(); err != nil {
		var fe *dump.FormatError
		switch {
		case ctx.Err() != nil:
			s.openErr = ctx.Err()
		case errors.As(err, &fe):
			s.damage = &damageAt{Offset: fe.Offset, Text: fe.Error()}
		default:
			s.openErr = err
		}
	}
	s.header = rd2.Header()
	if s.header.Task == "nan_check" {
		s.nanCheck = true
	}
	sc.decideDeferred(s, f, deferred)
	if mode != scanWhole && hits != nil && s.growsFromNegInf() {
		return sc.scanRank(ctx, rd, scanWhole)
	}
	return s
}

// scanRankSearched reads a rank's file again, its byte search made whole.
func (sc *scanner) scanRankSearched(ctx context.Context, rd dump.RankDir, mode scanMode) *rankScan {
	sc.searchWhole = true
	defer func() { sc.searchWhole = false }()
	partialRescans.Add(1)
	return sc.scanRank(ctx, rd, mode)
}

// partialSearches counts the searches stopped at their first severe
// suspect, partialRescans the files read again because that was not
// enough: for the tests.
var partialSearches, partialRescans atomic.Int64

// place records where an entry sits in the step: the backward entries'
// span, the ops before the first of them, the entries after the last one,
// the last collective.
func (s *rankScan) place(sc *scanner, e *dump.Entry, n dump.Name) {
	switch {
	case n.IsBackward():
		if s.firstBwd < 0 {
			s.firstBwd = e.Index
		}
		s.lastBwd = e.Index
		s.tail, s.tailFull = s.tail[:0], false
		return
	case s.firstBwd < 0:
		switch op := n.Op(); {
		case s.preOps[op]: // most calls: an op seen before (no copy is made to look it up)
		case len(s.preOps) < maxPreOps:
			s.preOps[sc.intern(op)] = true
		default:
			s.preOpsFull = true
		}
	}
	coll := n.IsDistributed()
	if coll {
		s.lastColl = e.Index
	}
	if len(s.tail) < maxTail {
		s.tail = append(s.tail, tailEntry{name: e.Name, index: int32(e.Index), coll: coll})
	} else {
		s.tailFull = true
	}
}

// sync records a collective's place among the rank's collectives. Past
// maxBases pairing bases, new ones are not followed: they order nothing,
// which only ever leaves two ranks unordered (a tie), never misordered.
func (s *rankScan) sync(ce *collEvent, n dump.Name) {
	if _, ok := s.syncs[ce.base]; !ok && len(s.syncs) >= maxBases {
		return
	}
	k := int32(len(s.syncs[ce.base]))
	if ce.named {
		k = int32(n.Call) // paired by name: the entry counter is the occurrence
	}
	s.syncs[ce.base] = append(s.syncs[ce.base], syncPoint{int32(ce.index), k})
}

// growsFromNegInf reports whether the rank's first anomaly holds no
// non-finite input but -inf: it may have grown from a -inf that an earlier
// forward call made, which the mask rule skipped.
func (s *rankScan) growsFromNegInf() bool {
	for i := range s.events {
		if ev := &s.events[i]; s.isSevere(ev) {
			return ev.collIdx < 0 && ev.in == nonfinite.NegInf
		}
	}
	return false
}

// span is the place of one call in a file.
type span struct {
	index       int
	offset, end int64
}

// maxDeferred bounds the forward calls with -inf kept for a second look.
const maxDeferred = 4096

// decideDeferred parses the skipped forward calls with -inf that turn out to
// come after the last backward call, in the update: -inf is an anomaly there.
func (sc *scanner) decideDeferred(s *rankScan, f *os.File, deferred []span) {
	added := false
	for _, d := range deferred {
		if d.index <= s.lastBwd || s.damage != nil {
			continue // not after the last backward entry of a whole file
		}
		e, err := sc.at.Read(f, d.offset, d.end)
		if err != nil {
			s.openErr = err
			return
		}
		e.Index = d.index
		n := dump.ParseName(e.Name)
		ev := event{index: d.index, dir: passOf(n), collIdx: -1, prevClean: -1, legitNeg: -1, name: e.Name, offset: d.offset, end: d.end}
		ev.facts = classify(e, n, sc.rules)
		ev.suppress = nil
		if s.keepEvent(&ev, n) {
			s.events = append(s.events, ev)
			added = true
		}
	}
	if added {
		slices.SortStableFunc(s.events, func(a, b event) int { return a.index - b.index })
	}
}

// onlyMasks reports whether a file's suspects cannot be severe (the rule
// set's ClearsFile): -inf in forward API calls before its last backward
// entry, found by reading the file's tail backwards.
func (sc *scanner) onlyMasks(f *os.File, size int64, h *dump.Hits) bool {
	if !policy.MasksOnly(h) {
		return false
	}
	if h.NoBackward {
		return policy.ClearsFile(h, -1) // what LastEntry would find, reading the file whole again
	}
	lastBwd, err := dump.LastEntry(f, size, h.Indent, policy.IsBackwardNameBytes)
	return err == nil && policy.ClearsFile(h, lastBwd)
}

// certainlySevere: an anomaly whatever the rest of the file says (whether
// a forward call lies after the last backward entry, which decides about
// -inf, is known only at the end).
func (s *rankScan) certainlySevere(ev *event) bool {
	if ev.flagged {
		return true
	}
	if c := s.collOf(ev); c != nil {
		return c.send|c.dest != 0
	}
	if (ev.in|ev.out)&(nonfinite.NaN|nonfinite.PosInf) != 0 {
		return true
	}
	return ev.in|ev.out != 0 && (ev.dir == dump.Backward || ev.dir == dump.ParamGrad || ev.param != 0)
}

// ctxReader stops reading when the context is cancelled, and counts what
// it reads for the progress display.
type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	prog *progress
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.prog.read(n)
	return n, err
}

// keepEvent decides whether a non-collective call is worth remembering.
func (s *rankScan) keepEvent(ev *event, n dump.Name) bool {
	all := ev.in | ev.out | ev.birth
	if all == 0 {
		return false
	}
	severe := all&(nonfinite.NaN|nonfinite.PosInf) != 0 || n.IsBackward() || ev.param != 0
	if severe {
		if s.severeKept < maxSevereEvents {
			s.severeKept++
			return true
		}
		return false
	}
	// -inf only, in a forward call. Before any backward entry it is either
	// a mask flowing on (not kept) or a new -inf (kept as a weak
	// candidate); after one it may lie after the last, decided at the end.
	if (ev.birth != 0 || s.firstBwd >= 0) && s.negKept < maxNegEvents {
		s.negKept++
		return true
	}
	return false
}

func (s *rankScan) suppress(op, reason string, values nonfinite.Class, entry string, birth bool) {
	s.suppressN(op, reason, values, entry, birth, 1)
}

func (s *rankScan) suppressN(op, reason string, values nonfinite.Class, entry string, birth bool, n int) {
	k := suppressKey{op: op, reason: reason, values: values}
	if i, ok := s.supIndex[k]; ok {
		s.suppressed[i].count += n
		s.suppressed[i].birth = s.suppressed[i].birth || birth
		return
	}
	if len(s.suppressed) >= maxSuppressKeys {
		return
	}
	s.supIndex[k] = len(s.suppressed)
	s.suppressed = append(s.suppressed, suppression{suppressKey: k, first: entry, count: n, birth: birth})
}

// destOf is what a collective event received; 0 for other calls.
func (s *rankScan) destOf(ev *event) nonfinite.Class {
	if c := s.collOf(ev); c != nil {
		return c.dest
	}
	return 0
}

// collOf returns the collective of an event, or nil.
func (s *rankScan) collOf(ev *event) *collEvent {
	if ev.collIdx >= 0 {
		return &s.colls[ev.collIdx]
	}
	return nil
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
