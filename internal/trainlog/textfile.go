package trainlog

import (
	"fmt"
	"strings"
)

// dsCounter follows the step counter printed by progress lines (Megatron
// iteration lines, DeepSpeed "step=" and "steps:" lines).
type dsCounter struct {
	cur      int // the last completed step, counted from 1
	known    bool
	at       int // the line that last set cur
	interval int // the gap between the last two progress lines, 0 if unknown
}

// progress records a progress line saying that step n is done.
func (c *dsCounter) progress(n, line int) {
	if c.known {
		c.interval = n - c.cur
	}
	c.cur, c.known, c.at = n, true, line
}

// dsState is the DeepSpeed reader's state for one rank.
type dsState struct {
	own dsCounter // from this rank's own progress lines

	// Overflow lines count steps from a counter: the rank's own when it has
	// progress lines, else the file's.
	cur  int // the last step counted
	from int // the line of the counter value cur was counted from, -1 if none

	skipped      int // the last "skipped=" value
	skippedKnown bool
	overflowSeen bool // an overflow message since the last "step=" line

	dicts int // HF-Trainer dict lines seen

	lossSeen  bool  // a Megatron line of this rank printed a loss
	lastScale Value // the last Megatron loss scale

	// applied: a progress line counted more steps than skipped ones, so
	// the rank has trained (its scale is no longer the initial search)
	applied bool
}

// textFile reads one text file.
type textFile struct {
	path     string
	nameRank int
	format   string // Options.Format
	pats     textPatterns
	warn     *fileWarnings

	structured *sink // Megatron and DeepSpeed lines
	generic    *sink // lines read through the user's patterns

	sawMegatron, sawDeepSpeed bool

	file         dsCounter // the counter of every progress line of the file
	lastOverflow lastOverflow
	ds           map[int]*dsState
	gen          map[int]*genericState
	lines        int
}

func (t *textFile) state(rank int) *dsState {
	s := t.ds[rank]
	if s == nil {
		s = &dsState{from: -1}
		t.ds[rank] = s
	}
	return s
}

func (t *textFile) allow(format string) bool { return t.format == FormatAuto || t.format == format }

// readText reads the lines of a text file into t.
func (t *textFile) read(lr *lineReader) {
	warnedCut := false
	for {
		line, cut, ok := lr.next()
		if !ok {
			break
		}
		n := lr.line
		if cut && !warnedCut {
			warnedCut = true
			t.warn.add(n, "line longer than %d bytes: only its start is read", lr.max)
		}
		t.line(line, n)
	}
	t.lines = lr.line
	if err := lr.readErr(); err != nil {
		t.warn.add(lr.line+1, "read stopped: %v", err)
	}
}

// line reads one line.
func (t *textFile) line(line []byte, n int) {
	rank := lineRank(line)
	lineHasRank := rank >= 0
	if !lineHasRank {
		rank = t.nameRank
	}
	if t.allow(FormatMegatron) {
		if m, ok := parseMegatronLine(line); ok {
			t.megatron(&m, rank, n)
			return
		}
	}
	if t.allow(FormatDeepSpeed) {
		if d := parseDeepSpeedLine(line); d.kind != dsNone {
			if d.textRank >= 0 && !lineHasRank {
				rank = d.textRank
			}
			t.deepspeed(&d, rank, lineHasRank || d.textRank >= 0, n)
			return
		}
	}
	if t.pats.any() && (t.format == FormatAuto || t.format == FormatGeneric) {
		st := t.gen[rank]
		if st == nil {
			st = &genericState{}
			t.gen[rank] = st
		}
		rec, ok, w := genericLine(t.pats, st, line)
		if w != "" {
			t.warn.addOnce(n, w)
		}
		if ok {
			rec.File, rec.Line, rec.Rank = t.path, n, rank
			t.generic.add(pending{rec: rec, nanIters: -1, mergeable: true})
		}
	}
}

// megatron takes a Megatron-LM iteration line.
func (t *textFile) megatron(m *megLine, rank, n int) {
	t.sawMegatron = true
	st := t.state(rank)
	st.own.progress(m.iter, n)
	t.file.progress(m.iter, n)
	rec := Record{File: t.path, Line: n, Rank: rank, Iteration: m.iter, Loss: m.loss, GradNorm: m.grad, LossScale: m.lossScale}
	if m.lossKey == nil && st.lossSeen && m.skipped <= 0 {
		rec.LossLeftOut = true
	}
	if m.lossKey != nil {
		st.lossSeen = true
	}
	if m.skipped > 0 {
		rec.Skipped = true
		var b strings.Builder
		fmt.Fprintf(&b, "number of skipped iterations: %d", m.skipped)
		if m.nanIters > 0 {
			fmt.Fprintf(&b, ", number of nan iterations: %d", m.nanIters)
		}
		if st.lastScale.Kind != Absent && m.lossScale.Kind != Absent && st.lastScale != m.lossScale {
			fmt.Fprintf(&b, ", loss scale %s → %s", st.lastScale, m.lossScale)
		}
		rec.Note = b.String()
	}
	if m.lossScale.Kind != Absent {
		st.lastScale = m.lossScale
	}
	t.structured.add(pending{rec: rec, nanIters: m.nanIters})
}

// deepspeed takes a DeepSpeed line.
func (t *textFile) deepspeed(d *dsLine, rank int, ranked bool, n int) {
	t.sawDeepSpeed = true
	st := t.state(rank)
	src := &st.own
	if !src.known {
		src = &t.file
	}
	switch d.kind {
	case dsOverflow:
		if t.mergeOverflow(d, rank, ranked, n) {
			return
		}
		if st.from != src.at {
			st.cur, st.from = 0, src.at
			if src.known {
				st.cur = src.cur
			}
		}
		rec := Record{File: t.path, Line: n, Rank: rank, Skipped: true, Note: d.note, LossScale: d.scaleTo}
		approx := false
		if d.iter0 >= 0 {
			rec.Iteration = d.iter0 + 1
		} else {
			rec.Iteration, rec.Inferred = st.cur+1, true
			approx = src.interval != 1
		}
		st.cur = rec.Iteration
		st.overflowSeen = true
		t.lastOverflow = lastOverflow{line: n, rank: rank, ranked: ranked, kinds: d.ovKind, lastKind: d.ovKind, lastNote: d.note}
		t.structured.add(pending{rec: rec, nanIters: -1, overflow: true, approx: approx, scaleFrom: d.scaleFrom, trained: st.applied})
	case dsProgress:
		st.own.progress(d.step, n)
		t.file.progress(d.step, n)
		st.applied = st.applied || (d.skipped >= 0 && d.step > d.skipped)
		if st.skippedKnown && d.skipped > st.skipped && !st.overflowSeen {
			rec := Record{File: t.path, Line: n, Rank: rank, Iteration: d.step, Skipped: true, Inferred: true,
				Note: fmt.Sprintf("skipped= rose from %d to %d", st.skipped, d.skipped)}
			t.structured.add(pending{rec: rec, nanIters: -1, approx: st.own.interval != 1})
		}
		st.skipped, st.skippedKnown, st.overflowSeen = d.skipped, true, false
	case dsSteps:
		st.own.progress(d.step, n)
		t.file.progress(d.step, n)
		t.structured.add(pending{rec: Record{File: t.path, Line: n, Rank: rank, Iteration: d.step, Loss: d.loss}, nanIters: -1})
	case dsDict:
		st.dicts++
		rec := Record{File: t.path, Line: n, Rank: rank, Loss: d.loss, GradNorm: d.grad, Inferred: true}
		if src.known {
			rec.Iteration = src.cur
		} else {
			rec.Iteration = st.dicts
		}
		t.structured.add(pending{rec: rec, nanIters: -1})
	}
}

// result returns the format of the file and the sink that holds its
// records, nil if nothing was recognised.
func (t *textFile) result() (string, *sink) {
	switch {
	case t.sawMegatron:
		return FormatMegatron, t.structured
	case t.sawDeepSpeed:
		return FormatDeepSpeed, t.structured
	case t.generic.n > 0 || len(t.generic.pending) > 0:
		return FormatGeneric, t.generic
	}
	return "", nil
}

// lastOverflow is the last overflow message of a file.
type lastOverflow struct {
	line     int    // its line (of the last message merged into it), 0 if none
	rank     int    // the rank of its record
	ranked   bool   // the rank came from the line, not the file name
	kinds    int    // the messages merged into it (ov* bits)
	lastKind int    // the last message merged
	lastNote string // and its note
}

// mergeOverflow merges an overflow message into the previous one when they
// describe the same overflow: at most three lines apart, no progress line
// in between, the same rank (or one of them names none), and either a kind
// of message not merged yet ("Grad overflow on iteration", "Reducing
// dynamic loss scale", "Skipping step"), or, in a file whose name gives no
// rank, the same message again without a rank (several processes printing
// the same overflow). The same message twice otherwise means two overflows
// in a row. A message with an exact iteration corrects a counted one, and a
// message that names its rank gives it to a previous one that did not.
func (t *textFile) mergeOverflow(d *dsLine, rank int, ranked bool, n int) bool {
	lo := &t.lastOverflow
	if lo.line == 0 || n-lo.line > 3 || t.file.at > lo.line || (ranked && lo.ranked && rank != lo.rank) {
		return false
	}
	duplicate := !ranked && !lo.ranked && t.nameRank < 0 && d.ovKind == lo.lastKind && d.note == lo.lastNote
	if lo.kinds&d.ovKind != 0 && !duplicate {
		return false
	}
	lo.kinds |= d.ovKind
	lo.lastKind, lo.lastNote = d.ovKind, d.note
	p := t.structured.pending[lo.rank]
	if p == nil || !p.overflow {
		return false
	}
	if ranked && !lo.ranked && rank != lo.rank {
		delete(t.structured.pending, lo.rank)
		if q := t.structured.pending[rank]; q != nil {
			t.structured.flush(q)
		}
		p.rec.Rank = rank
		t.structured.pending[rank] = p
		// The rank's overflow count goes on from this overflow.
		old, st := t.state(lo.rank), t.state(rank)
		st.cur, st.from, st.overflowSeen = p.rec.Iteration, old.from, true
		lo.rank, lo.ranked = rank, true
	}
	lo.line = n
	if d.iter0 >= 0 && p.rec.Inferred {
		p.rec.Iteration, p.rec.Inferred, p.approx = d.iter0+1, false, false
		t.structured.markSkipped(p.rec.Iteration)
	}
	t.state(lo.rank).cur = p.rec.Iteration
	if p.rec.Note == "fp16 overflow" || (strings.Contains(d.note, "→") && !strings.Contains(p.rec.Note, "→")) {
		p.rec.Note = d.note
	}
	if p.rec.LossScale.Kind == Absent && d.scaleTo.Kind != Absent {
		p.rec.LossScale, p.scaleFrom = d.scaleTo, d.scaleFrom
	}
	return true
}
