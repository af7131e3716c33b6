package trace

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/bytesearch"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// walker carries a rank's plan out: it reads the entries of its dump.json
// in order, parses those the plan (policy.EntryWalk; every entry without
// one) asks for, places every entry in the step and keeps what the parsed
// ones say (signs). It says when the plan cannot answer and a dearer
// strategy must read the file again.
type walker struct {
	ctx  context.Context
	sc   *scanner
	s    *rankScan
	f    *os.File
	mode scanMode
	how  strategy
	hits *bytesearch.Hits  // the byte search's; nil when every entry is parsed
	plan *policy.EntryWalk // made from hits

	signs       signs
	deferred    []span         // masks passed over since the latest backward entry
	seen        map[string]int // collectives met per pairing base
	collsOfBase map[string]int // non-finite collectives kept whole per pairing base

	prevClean int    // the last call whose outputs were finite; -1
	prevName  string // its name
	legitNeg  int    // the latest legitimate -inf source; -1
}

// span is the place of one call in a file.
type span struct {
	index       int
	offset, end int64
}

// step is what the walk does after an entry.
type step uint8

const (
	goOn     step = iota
	stop          // the scan is over: an anomaly stops a checking read, or an error
	fallBack      // the plan cannot answer: read the file again with walker.next
)

// walk reads the file from src and returns the strategy to read it again
// with, or w.how when the scan is done.
func (w *walker) walk(src io.Reader) strategy {
	s := w.s
	opt := dump.ReaderOptions{WindowSize: windowFor(s.bytes)}
	if w.hits != nil {
		w.plan = policy.NewEntryWalk(w.hits)
		opt.Select = w.plan.Parse
		if w.hits.Located {
			opt.Indent, s.indent = w.hits.Indent, w.hits.Indent // skipped calls are passed over by their closing lines
		}
	}
	rd := w.sc.reader(src, opt)
	for rd.Next() {
		e := rd.Entry()
		s.wholeTo = e.End
		if w.pastSearched(e.End) {
			return searchWhole // past what was searched, and no anomaly yet
		}
		switch w.entry(rd, e) {
		case stop:
			s.events = w.signs.events()
			return w.how
		case fallBack:
			return parseAll
		}
	}
	if w.pastSearched(rd.Offset()) {
		return searchWhole // the suspects searched were no anomaly
	}
	w.end(rd)
	if w.plan != nil && s.growsFromNegInf() {
		return parseAll // its root may be a -inf birth the walk passed over
	}
	return w.how
}

// pastSearched reports whether an entry ending at end lies past what a
// search stopped at its first suspect covered, while the walk still needs
// the search: once it is settled, only collectives are parsed, whatever the
// search found. (A search that saw no statistics yet is not enough either:
// the counts of the file would lack them.)
func (w *walker) pastSearched(end int64) bool {
	return w.hits != nil && w.hits.Partial && end > w.hits.Searched && !(w.plan.Settled() && w.hits.Stats > 0)
}

// end records what the end of the file says: damage, the header, the
// masks that lie after the last backward entry; and the calls kept.
func (w *walker) end(rd *dump.Reader) {
	s := w.s
	if err := rd.Err(); err != nil {
		var fe *dump.FormatError
		switch {
		case w.ctx.Err() != nil:
			s.openErr = w.ctx.Err()
		case errors.As(err, &fe):
			s.damage = &damageAt{Offset: fe.Offset, Text: fe.Error()}
		default:
			s.openErr = err
		}
	}
	s.header = rd.Header()
	if s.header.Task == "nan_check" {
		s.nanCheck = true
	}
	if err := w.parseDeferred(); err != nil {
		s.openErr = err
	}
	s.events = w.signs.events()
}

// entry handles one entry: placed in the step, then parsed as the plan
// says, and recorded.
func (w *walker) entry(rd *dump.Reader, e *dump.Entry) step {
	s := w.s
	s.entries++
	n := dump.ParseName(e.Name)
	if n.UnderscoreCounters && s.underscored == "" {
		s.underscored = e.Name
	}
	if s.place(w.sc, e, n) {
		w.signs.backwardEntry()
		w.deferred = w.deferred[:0] // none of them lies after the last backward entry
	}
	if e.Skipped {
		full, next := w.skipped(rd, e)
		if full == nil {
			return next
		}
		e = full
	}
	return w.parsed(e, n)
}

// skipped handles an entry the plan passed over: nothing more when its
// bytes hold no suspect, or only a mask (kept to be parsed at the end when
// it may lie after the last backward entry); the entry, parsed from the
// read window or the file, when they hold a suspect the plan's choice
// before reading missed.
func (w *walker) skipped(rd *dump.Reader, e *dump.Entry) (*dump.Entry, step) {
	if w.plan.Settled() {
		return nil, goOn
	}
	switch w.plan.Skipped(e.Offset, e.End) {
	case policy.SkipMask:
		if w.s.firstBwd >= 0 {
			if len(w.deferred) >= w.sc.lim.deferred {
				reached.deferred.Add(1)
				return nil, fallBack // too many to keep: parse every entry
			}
			w.deferred = append(w.deferred, span{e.Index, e.Offset, e.End})
		}
		fallthrough
	case policy.SkipClean:
		w.prevClean, w.prevName = e.Index, e.Name // nothing non-finite in its bytes, or a mask
		return nil, goOn
	}
	var full *dump.Entry
	var err error
	if raw := rd.Raw(); raw != nil {
		full, err = w.sc.at.Parse(raw, e.Offset)
	} else {
		full, err = w.sc.at.Read(w.f, e.Offset, e.End)
	}
	if err != nil {
		w.s.openErr = err
		return nil, stop
	}
	full.Index = e.Index
	return full, goOn
}

// parsed records what a parsed entry holds.
func (w *walker) parsed(e *dump.Entry, n dump.Name) step {
	s := w.s
	s.notice(e)
	ev := event{index: e.Index, dir: passOf(n), module: n.Module, collIdx: -1, prevClean: w.prevClean, prevCleanName: w.prevName,
		legitNeg: w.legitNeg, flagged: e.IsNaN == 1, recompute: e.Recompute}
	var outClean, interesting, legit bool
	if n.IsDistributed() {
		outClean, interesting = w.collective(e, n, &ev)
	} else {
		outClean, interesting, legit = w.call(e, n, &ev)
	}
	if ev.flagged {
		s.flagged++
		interesting = true
	}
	if interesting {
		ev.name = e.Name
		ev.offset, ev.end = e.Offset, e.End
		if w.note(&ev) {
			return stop
		}
	}
	if legit {
		w.signs.legitimateNegInf()
	}
	if e.HasOutput && outClean {
		w.prevClean, w.prevName = e.Index, e.Name
	}
	return goOn
}

// note keeps what the account needs of a call that may matter, and tells
// whether the scan stops there (a checking read stops at the first call
// that is certainly an anomaly). Once an anomaly and a NaN output are
// known, the walk is settled.
func (w *walker) note(ev *event) bool {
	s := w.s
	certain := s.certainlySevere(ev)
	w.signs.offer(ev, s, certain, s.firstBwd >= 0)
	if certain && w.mode == scanUntilSevere {
		s.stopped = true
		return true
	}
	s.severeSeen = s.severeSeen || certain
	if (ev.out|s.destOf(ev))&nonfinite.NaN != 0 && s.severeSeen && w.plan != nil {
		w.plan.Settle()
	}
	return false
}

// collective reads a collective: its pairing key, its place among the
// rank's collectives, and, when it sent or received a non-finite value,
// the collective itself, kept up to the limit (and past it the first that
// received NaN: the first NaN may be it; and the first of its pairing
// base, up to twice the limit in all). It reports whether its receive
// slots are finite and whether it was kept.
func (w *walker) collective(e *dump.Entry, n dump.Name, ev *event) (outClean, kept bool) {
	s := w.s
	ce := readCollective(e, n, s.dir.Rank, w.seen)
	s.sync(&ce, n)
	w.sc.shareGroup(s, &ce)
	if ce.ignored != 0 {
		s.suppress(n.Op(), policy.ReasonReceiveBuffer, ce.ignored, e.Name, false)
	}
	switch {
	case ce.send|ce.dest == 0:
		return true, false
	case len(s.colls) < s.lim.colls, ce.dest&nonfinite.NaN != 0 && !w.signs.nanSeen(),
		w.collsOfBase[ce.base] < s.lim.collsPerBase && len(s.colls) < 2*s.lim.colls:
		ev.collIdx = len(s.colls)
		s.colls = append(s.colls, ce)
		w.collsOfBase[ce.base]++
		return ce.dest == 0, true
	}
	if !s.collsFull {
		reached.colls.Add(1)
	}
	s.collsFull = true
	return ce.dest == 0, false
}

// call reads a call that is not a collective: its facts, the exclusions
// that changed it, the counts. It reports whether its outputs are finite,
// whether it may matter to the account, and whether it is a legitimate
// -inf source (a mask a rule excused, a -inf constant argument).
func (w *walker) call(e *dump.Entry, n dump.Name, ev *event) (outClean, interesting, legit bool) {
	s := w.s
	ev.facts = classify(e, n, w.sc.rules)
	s.tensors += ev.tensors
	s.stats += ev.stats
	if ev.statless {
		s.statless++
	}
	for _, h := range ev.suppress {
		if h.birth || h.input {
			s.suppress(n.Op(), h.reason, h.values, e.Name, h.birth)
		}
		legit = legit || (h.birth && h.values&nonfinite.NegInf != 0)
	}
	legit = legit || ev.negConst
	if legit {
		w.legitNeg = e.Index
	}
	return ev.out == 0, s.interesting(ev, n), legit
}

// parseDeferred parses the masks passed over since the last backward entry:
// they lie after it, in the update, where -inf is an anomaly. (The walk
// reset them at each backward entry; a damaged file has nothing after its
// last backward entry.)
func (w *walker) parseDeferred() error {
	s := w.s
	if s.damage != nil {
		return nil
	}
	for _, d := range w.deferred {
		e, err := w.sc.at.Read(w.f, d.offset, d.end)
		if err != nil {
			return err
		}
		e.Index = d.index
		n := dump.ParseName(e.Name)
		ev := event{index: d.index, dir: passOf(n), collIdx: -1, prevClean: -1, legitNeg: -1, name: e.Name, offset: d.offset, end: d.end}
		ev.facts = classify(e, n, w.sc.rules)
		ev.suppress = nil
		if s.interesting(&ev, n) {
			w.signs.offer(&ev, s, s.certainlySevere(&ev), true)
		}
	}
	return nil
}

// notice records what an entry says of its file, for the warnings.
func (s *rankScan) notice(e *dump.Entry) {
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
}
