package trace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/entryat"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/safeio"
	"github.com/nanhunt/nanhunt/verdict"
)

// Bounds of the origin timeline.
const (
	cleanCalls    = 4     // clean calls shown before the root op
	ringCalls     = 16    // calls remembered before the root op, to find the clean ones
	chainCalls    = 6     // non-finite calls shown between the root op and the first NaN
	maxCallsAfter = 50000 // calls read after the root op looking for the first NaN and collective
	timelineRead  = 256 << 10
)

// timeline reads the first origin rank's calls around the root op for
// the verdict (verdict.Timeline): nil when the verdict has no origin. The
// root op is known only once every rank is heard, and the scan passed over
// the calls before it unparsed; so the rank's dump.json of the origin step
// is read once more, entries before the root op skipped unparsed, the few
// before it read again by their byte ranges, and every entry placed in the
// step's phases on the way (past each skipped entry's closing line, when
// the scan saw the file's indentation: indentOf, by rank; nil when it is
// unknown). dumpPath names the dump in what it says.
func timeline(ctx context.Context, v *verdict.Verdict, layout *dump.Layout, dumpPath string, indentOf func(rank int) int) (*verdict.Timeline, *hiddenFound, error) {
	o := v.Origin
	if !v.Anomaly || o == nil || len(o.Ranks) == 0 {
		return nil, nil, nil
	}
	rank := o.Ranks[0]
	tl := &verdict.Timeline{Rank: rank, Calls: []verdict.TimelineCall{}}
	var rd *dump.RankDir
	for i, d := range layout.Dirs {
		if d.Mode == v.Scanned.Mode && d.Step == o.Step && d.Rank == rank {
			rd = &layout.Dirs[i]
			break
		}
	}
	if rd == nil || rd.Dump == "" {
		tl.Unread = fmt.Sprintf("no dump.json of step %d, rank %d under %s", o.Step, rank, dumpPath)
		return tl, nil, nil
	}
	f, err := safeio.Open(rd.Dump)
	if err != nil {
		tl.Unread = err.Error()
		return tl, nil, nil
	}
	defer f.Close()
	tl.File = verdict.Path(rd.Dump)
	indent := 0
	if indentOf != nil {
		indent = indentOf(rank)
	}
	hid := &hiddenFound{}
	if err := readTimeline(ctx, tl, hid, f, v, *rd, indent); err != nil {
		return nil, nil, err
	}
	return tl, hid, nil
}

// hiddenFound is what the timeline's reading found of a hidden NaN: nil
// explanation when there was none.
type hiddenFound struct {
	explanation *verdict.Explanation
	hider       string
}

// timelineWalk is what the reading of a timeline keeps while it walks the
// file.
type timelineWalk struct {
	v       *verdict.Verdict
	tl      *verdict.Timeline
	f       *os.File
	found   bool // the root op was met
	done    bool // the calls wanted were met: the rest is only placed
	ring    []span
	wantNaN bool // the first NaN of the verdict is this rank's, at this step
	gotNaN  bool
	gotColl bool
	carrier string // the carrier, when this rank sent it
	chain   int
	after   int // calls read after the root op
	events  []*event
	hidden  hiddenWatch // a forward NaN that a later call hid
	// at reads the calls the timeline shows again with their details: the
	// walk reads the up to 50,000 calls after the root op without them
	at *entryat.Reader
}

// readTimeline walks the rank's dump.json once: the timeline's calls, and
// every entry placed in the step's phases. Only cancellation is an error;
// what the file lacks is said in tl.
func readTimeline(ctx context.Context, tl *verdict.Timeline, hid *hiddenFound, f *os.File, v *verdict.Verdict, rd dump.RankDir, indent int) error {
	o := v.Origin
	w := &timelineWalk{v: v, tl: tl, f: f, wantNaN: v.FirstNaN != nil && v.FirstNaN.Rank == tl.Rank && v.FirstNaN.Step == o.Step,
		hidden: newHiddenWatch(o.Op)}
	if c := v.Carrier; c != nil && slices.Contains(c.FromRanks, tl.Rank) {
		w.carrier = c.Op
	}
	w.gotNaN = !w.wantNaN
	sc := newScanner(policy.Default(), nil)
	s := newRankScan(rd)
	w.at = entryat.New(dump.ReaderOptions{Details: true})
	r := dump.NewReader(&ctxReader{ctx: ctx, r: f}, dump.ReaderOptions{WindowSize: timelineRead, Indent: indent,
		Select: func(name string, _ int64) bool {
			return w.hidden.on || (!w.done && (w.found || name == o.Op)) || (!w.found && name == w.hidden.forward)
		}})
	for r.Next() {
		e := r.Entry()
		n := dump.ParseName(e.Name)
		s.place(sc, e, n)
		if w.hidden.on {
			w.hidden.see(e, n)
		}
		if !w.found && w.hidden.forward != "" && e.Name == w.hidden.forward && !e.Skipped {
			w.hidden.start(e, n)
		}
		if !w.done {
			w.entry(e, n)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.header = r.Header()
	rerr := r.Err()
	if !w.done { // the error met while the calls were wanted
		w.damage(r.Err(), rd.Dump)
	}
	if !w.found {
		tl.Warnings = nil
		if rerr != nil {
			tl.Unread = fmt.Sprintf("%s ends before %s (%v)", rd.Dump, o.Op, rerr)
		} else {
			tl.Unread = fmt.Sprintf("%s holds no entry %s", rd.Dump, o.Op)
		}
		return nil
	}
	var fe *dump.FormatError
	if rerr == nil || errors.As(rerr, &fe) {
		// a damaged file places the calls before the damage
		evs := w.events
		if h := &w.hidden; h.found() {
			evs = append(slices.Clip(evs), h.hider, h.back)
		}
		sc.phases(s, evs)
		for i, ev := range w.events {
			tl.Calls[i].Phase = ev.phase.String()
		}
		if e := w.hidden.explanation(o); e != nil {
			hid.explanation, hid.hider = e, w.hidden.hider.name
		}
	} else {
		tl.Warnings = append(tl.Warnings, fmt.Sprintf("the phases of the calls could not be read: %v", rerr))
	}
	if !w.gotColl && (w.done || rerr == nil) {
		tl.Warnings = append(tl.Warnings, fmt.Sprintf("no collective after %s in %d calls read", o.Op, w.after))
	}
	return nil
}

// damage warns of a reading error met before the calls wanted were all
// read.
func (w *timelineWalk) damage(err error, file string) {
	var fe *dump.FormatError
	switch {
	case errors.As(err, &fe):
		w.tl.Warnings = append(w.tl.Warnings, fmt.Sprintf("%s is damaged at %s; the calls before the damage are shown", file, fe.Error()))
	case err != nil:
		w.tl.Warnings = append(w.tl.Warnings, fmt.Sprintf("%s: %v", file, err))
	}
}

// entry looks at one entry while the timeline's calls are wanted: the
// entries before the root op are remembered by their byte ranges only,
// the root op and those after it are read whole.
func (w *timelineWalk) entry(e *dump.Entry, n dump.Name) {
	if !w.found {
		if e.Skipped || e.Name != w.v.Origin.Op { // (parsed before it only to follow a hidden value)
			if len(w.ring) == ringCalls {
				w.ring = w.ring[1:]
			}
			w.ring = append(w.ring, span{e.Index, e.Offset, e.End})
			return
		}
		w.found = true
		if w.hidden.forward == "" {
			w.hidden.start(e, n)
		}
		w.cleanBefore()
		w.add(e, n, "root")
		w.gotColl = n.IsDistributed()
		return
	}
	w.after++
	out := outputClass(e)
	switch {
	case w.wantNaN && !w.gotNaN && e.Name == w.v.FirstNaN.Op:
		w.gotNaN = true
		w.add(e, n, "first_nan")
	case n.IsDistributed() && !w.gotColl:
		w.gotColl = true
		if e.Name == w.carrier {
			w.add(e, n, "carrier")
		} else {
			w.add(e, n, "collective")
		}
	case w.wantNaN && !w.gotNaN && out != 0 && w.chain < chainCalls:
		w.chain++
		w.add(e, n, "chain")
	}
	w.done = (w.gotNaN && w.gotColl) || w.after >= maxCallsAfter
}

// cleanBefore reads the remembered entries before the root op again and
// keeps the last ones whose outputs are finite.
func (w *timelineWalk) cleanBefore() {
	x := entryat.New(dump.ReaderOptions{Details: true})
	var calls []verdict.TimelineCall
	var evs []*event
	for i := len(w.ring) - 1; i >= 0 && len(calls) < cleanCalls; i-- {
		p := w.ring[i]
		e, err := x.Read(w.f, p.offset, p.end)
		if err != nil {
			continue
		}
		e.Index = p.index
		if outputClass(e) != 0 {
			continue
		}
		c, ev := callOf(e, dump.ParseName(e.Name), "clean")
		calls, evs = append(calls, c), append(evs, ev)
	}
	slices.Reverse(calls)
	slices.Reverse(evs)
	w.tl.Calls = append(w.tl.Calls, calls...)
	w.events = append(w.events, evs...)
}

// add appends a call to the timeline, and the event that places it in
// its phase.
func (w *timelineWalk) add(e *dump.Entry, n dump.Name, role string) {
	if full, err := w.at.Read(w.f, e.Offset, e.End); err == nil {
		// the same call with its details (values, dtypes, shapes)
		full.Index, full.Recompute = e.Index, e.Recompute
		e = full
	}
	c, ev := callOf(e, n, role)
	w.tl.Calls = append(w.tl.Calls, c)
	w.events = append(w.events, ev)
}

// callOf is an entry as a call of the timeline, with at most
// verdict.MaxTimelineTensors tensors per side (it copies what it keeps:
// the entry's buffers may be reused), and the event that places it.
func callOf(e *dump.Entry, n dump.Name, role string) (verdict.TimelineCall, *event) {
	c := verdict.TimelineCall{Index: e.Index, Op: e.Name, Role: role, Inputs: []verdict.TensorStat{}, Outputs: []verdict.TensorStat{}}
	var out nonfinite.Class
	hasOut := false
	for i := range e.Tensors {
		t := &e.Tensors[i]
		isOut := t.Field == dump.Output || t.Field == dump.ParamGrads
		if isOut {
			out |= policy.Holds(t)
			hasOut = true
		}
		switch {
		case isOut && len(c.Outputs) < verdict.MaxTimelineTensors:
			c.Outputs = append(c.Outputs, tensorStatOf(t))
		case !isOut && len(c.Inputs) < verdict.MaxTimelineTensors:
			c.Inputs = append(c.Inputs, tensorStatOf(t))
		default:
			c.More++
		}
	}
	if hasOut {
		c.Holds = out.String()
	}
	ev := &event{index: e.Index, name: e.Name, dir: passOf(n), module: n.Module, collIdx: -1, recompute: e.Recompute}
	if n.IsDistributed() {
		ev.collIdx = 0 // a collective: its phase does not depend on what it holds
	}
	return c, ev
}

// outputClass is what the outputs of an entry hold.
func outputClass(e *dump.Entry) nonfinite.Class {
	var c nonfinite.Class
	for i := range e.Tensors {
		t := &e.Tensors[i]
		if t.Field == dump.Output || t.Field == dump.ParamGrads {
			c |= policy.Holds(t)
		}
	}
	return c
}

// indentOf is the indentation the scan of a rank of the step saw; 0
// when it saw none.
func (r *stepResult) indentOf(rank int) int {
	if r == nil || r.scans[rank] == nil {
		return 0
	}
	return r.scans[rank].indent
}
