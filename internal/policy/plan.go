package policy

import (
	"io"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/bytesearch"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"
)

// Read is how much of a dump.json the analysis parses, decided from what
// its byte search found (bytesearch.Hits): the search only locates, the plan
// decides.
type Read uint8

// The plans of a file.
const (
	// Clear: the search found nothing that could be non-finite
	// (NoSuspects); the file is not parsed.
	Clear Read = iota
	// ClearMasks: every suspect is -inf in a forward API call before the
	// file's last backward entry, where -inf is not severe (MasksOnly,
	// ClearsFile); the file is not parsed.
	ClearMasks
	// Walk: collectives and the entries that hold suspects are parsed,
	// entry by entry as a Walk says; the others are passed over.
	Walk
	// ReadAll: every entry is parsed. The search cannot guide a walk: the
	// file does not end the way json.dump ends a document (cut short by a
	// crash, or written on one line), or its tensors carry no statistics.
	ReadAll
)

// PlanFile decides how much of a file to parse from its byte search. When
// only -inf in forward API calls was found, ra (size bytes) is read for a
// backward entry past the last of them (up to probe bytes past it,
// bytesearch.EntryAfter), then, when none is there, backwards for the
// file's last backward entry (bytesearch.LastEntry): whether one lies past
// them decides whether that -inf can lie in the update. probe changes what
// is read, never the plan.
func PlanFile(h *bytesearch.Hits, ra io.ReaderAt, size, probe int64) Read {
	switch {
	case NoSuspects(h):
		return Clear
	case MasksOnly(h) && masksBeforeLastBackward(h, ra, size, probe):
		return ClearMasks
	case (!h.Whole && !h.Partial) || (h.Tensors > 0 && h.Stats == 0):
		return ReadAll
	}
	return Walk
}

// masksBeforeLastBackward reports whether every hit of a MasksOnly file
// lies before its last backward entry: whether a backward entry lies past
// the last entry holding a hit. The bytes just after that entry are read
// first (a training step's first backward entry follows its last mask
// closely); when no backward entry is there, the file is read from its end
// backwards for its last one (its optimizer may be a quarter of it).
func masksBeforeLastBackward(h *bytesearch.Hits, ra io.ReaderAt, size, probe int64) bool {
	if h.NoBackward {
		return ClearsFile(h, -1) // what LastEntry would find, reading the file whole again
	}
	if next, err := bytesearch.EntryAfter(ra, h.LastEntry, probe, size, h.Indent, IsBackwardNameBytes); err == nil && next >= 0 {
		return ClearsFile(h, next) // the last backward entry is at next or later
	}
	lastBwd, err := bytesearch.LastEntry(ra, size, h.Indent, IsBackwardNameBytes)
	return err == nil && ClearsFile(h, lastBwd)
}

// BackwardProbe is how far past its last mask a file is read for a backward
// entry before it is read from its end instead (PlanFile).
const BackwardProbe = 256 << 10

// masksFlowIn reports whether -inf in a call of this name is not severe
// wherever it lies before the step's last backward entry: a forward API
// call is a Computation there (Severe), which masks are built in and flow
// through. A module's parameters are Weights, a collective's values
// Communication, a backward entry's Gradient: -inf is severe in each.
func masksFlowIn(n dump.Name) bool {
	return n.Dir == notation.Forward && !n.Module && !n.IsDistributed() && Severe(nonfinite.NegInf, Computation) == 0
}

// EntryWalk is the plan of a walked file (Walk), entry by entry: which
// entries to parse before their bytes are read (Parse), and what one
// passed over needs (Skipped). It follows the entries in file order.
type EntryWalk struct {
	hits    *bytesearch.Hits
	next    int  // the first span of hits not behind the entry last asked about
	settled bool // the rank's first anomaly and first NaN are known
	mask    bool // the entry last asked about was passed over as a mask
}

// NewEntryWalk returns the walk of a file whose byte search found h.
func NewEntryWalk(h *bytesearch.Hits) *EntryWalk { return &EntryWalk{hits: h} }

// parseAhead: a call whose start lies this close before a hit is parsed
// right away rather than read again from the window afterwards.
const parseAhead = 4 << 10

// Parse is a dump.ReaderOptions.Select: whether to parse the entry named
// name that starts at off. Collectives always are (they are paired across
// ranks). Once the walk is settled, nothing else is: the rest of the file
// matters only for the pairing and for the phases, which the names give.
// A forward API call before the first suspect that may be NaN or +Inf is
// not (masksFlowIn): its -inf matters only if it lies after the last
// backward entry (see Skipped). Any other entry is parsed when a span of
// hits starts before its start plus parseAhead.
func (w *EntryWalk) Parse(name string, off int64) bool {
	w.mask = false
	if IsCollective(name) {
		return true
	}
	if w.settled {
		return false
	}
	if w.inMaskRegion(off) && masksFlowIn(dump.ParseName(name)) {
		w.mask = true
		return false
	}
	h := w.hits
	for w.next < len(h.Spans) && h.Spans[w.next].To < off {
		w.next++
	}
	return w.next < len(h.Spans) && h.Spans[w.next].From < off+parseAhead
}

// Settle marks the rank's first anomaly and first NaN known: from here on
// only collectives are parsed, and a skipped entry needs nothing.
func (w *EntryWalk) Settle() { w.settled = true }

// Settled reports whether Settle was called.
func (w *EntryWalk) Settled() bool { return w.settled }

// Skip is what an entry Parse passed over needs.
type Skip uint8

// What a skipped entry needs.
const (
	// SkipClean: no suspect lies in its bytes.
	SkipClean Skip = iota
	// SkipMask: it holds suspects that can only be -inf, in a forward API
	// call before the first suspect that may be NaN or +Inf: not severe,
	// unless it lies after the step's last backward entry (the Update),
	// which only the end of the file tells.
	SkipMask
	// SkipParse: it holds a suspect that the choice made before its bytes
	// were read passed over: it is parsed.
	SkipParse
)

// Skipped says what the entry in [from, to), which Parse passed over,
// needs. It is asked right after Parse, for the same entry.
func (w *EntryWalk) Skipped(from, to int64) Skip {
	h := w.hits
	for w.next < len(h.Spans) && h.Spans[w.next].To < from {
		w.next++
	}
	switch within := w.next < len(h.Spans) && h.Spans[w.next].From < to; {
	case !within:
		return SkipClean
	case w.mask && (h.FirstSevere < from || h.FirstSevere >= to):
		return SkipMask
	}
	return SkipParse // (a mask holding the first suspect NaN or +Inf is parsed)
}

// inMaskRegion: before the first suspect that may be NaN or +Inf.
func (w *EntryWalk) inMaskRegion(off int64) bool {
	return w.hits.FirstSevere < 0 || off < w.hits.FirstSevere
}
