package trace

import (
	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/policy"
)

// walk decides, entry by entry, what of a file the byte search flagged
// must be parsed. Collectives always are (they are paired across ranks).
// Forward API calls in the mask region are not: -inf there is a mask
// flowing on (those after a backward call are looked at again at the end,
// in case they belong to the update), and a -inf born there matters only
// when a NaN or +inf grows out of it, which scanRank checks by reading the
// file again whole. Once the rank's first anomaly and its first NaN are
// known (settled), only collectives are parsed: the rest matters only for
// the pairing and for the stage, which the names give.
type walk struct {
	hits     *dump.Hits
	next     int  // the first span of hits not behind the current entry
	settled  bool // the rank's first anomaly and first NaN are known
	maskSkip bool // the last entry was skipped by the mask rule
}

// parseAhead: a call whose start lies this close before a hit is parsed
// right away rather than read again from the window afterwards.
const parseAhead = 4 << 10

// choose is a dump.ReaderOptions.Select: whether to parse the entry.
func (w *walk) choose(name string, off int64) bool {
	w.maskSkip = false
	if policy.IsCollective(name) {
		return true
	}
	if w.settled {
		return false
	}
	if w.inMaskRegion(off) {
		if n := dump.ParseName(name); n.Dir == dump.Forward && !n.Module {
			w.maskSkip = true
			return false
		}
	}
	h := w.hits
	for w.next < len(h.Spans) && h.Spans[w.next].To < off {
		w.next++
	}
	return w.next < len(h.Spans) && h.Spans[w.next].From < off+parseAhead
}

// within is hits.Within for the entry choose was last asked about (or
// one after it): the spans are followed with choose's cursor, not
// searched.
func (w *walk) within(from, to int64) bool {
	h := w.hits
	for w.next < len(h.Spans) && h.Spans[w.next].To < from {
		w.next++
	}
	return w.next < len(h.Spans) && h.Spans[w.next].From < to
}

// inMaskRegion: before the first suspect that may be NaN or +inf.
func (w *walk) inMaskRegion(off int64) bool {
	return w.hits.FirstSevere < 0 || off < w.hits.FirstSevere
}
