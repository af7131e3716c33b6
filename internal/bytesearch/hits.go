package bytesearch

import (
	"cmp"
	"slices"
)

// Hits is where a dump.json may hold a non-finite value, found by a byte
// search without parsing. A file without hits holds none: every statistic
// the Reader would return is finite (or null, or not a number). The
// converse does not hold: a hit only says "parse here".
type Hits struct {
	// Spans hold the suspect tokens: ascending and disjoint, each from the
	// offset of its first suspect to that of its last. There are at most as
	// many as the Prefilter keeps: past that, the spans closest to each
	// other are merged (a span may then hold clean bytes between its
	// suspects, never a suspect outside every span), so a file with a
	// hundred thousand attention masks is still searched to its end.
	Spans []Span
	// Whole: the bytes start with '{', hold no NUL byte (never valid JSON
	// text; the search stops at the first window holding one, or at a
	// first byte other than '{'), are laid out by json.dump(indent=N) with
	// one top-level "data" member, the last (see topLevel), and end the way
	// json.dump ends such a document: the line closing "data" at one
	// indentation, then a line holding only the closing '}'. A dump.json
	// cut by a crash during msprobe's write is not whole, and must be parsed
	// to say where it ends; so is a document written on one line, and one
	// with a second "data" member (damage) or another member after "data".
	// (A cleared file is not parsed, so other damage to it goes unseen.)
	Whole bool
	// Located: the document is indented (json.dump(indent=N)), and the
	// hits were placed in their entries while they could all be -inf in
	// forward API calls (not modules, not collectives): up to the first
	// that may be NaN or +Inf (FirstSevere), or the first outside such a
	// call (then Forward is false), which is placed too. Then Forward says
	// whether every hit placed lies in a forward API call, and LastEntry is
	// the offset of the last entry holding a placed hit. Past that no hit
	// is placed: nothing can be cleared as masks only any more
	// (policy.MasksOnly), and a file full of NaN is searched without
	// looking for the entry of each.
	Located   bool
	Forward   bool
	LastEntry int64
	// Indent is the document's indentation, when Located.
	Indent int
	// ForwardOps counts the placed hits in forward API calls by op
	// ("Torch.log"), for at most 64 ops, and OtherForwardOps those of the
	// other ops; when Located.
	ForwardOps      map[string]int
	OtherForwardOps int
	// FirstSevere is the offset of the first hit that may be NaN or +Inf
	// (not only -inf, which attention masks write on purpose); -1 if none.
	FirstSevere int64
	// Tensors and Stats count the "dtype" and "Max" keys: a file whose
	// tensors carry no statistics (summary_mode xor) says nothing about
	// NaN, and must be parsed to say so.
	Tensors, Stats int
	// NoBackward: every byte was searched and none of the byte sequences
	// every backward name holds (see MayBeBackward) occurs, so the file
	// has no backward entry and LastEntry would return -1 after reading it
	// whole. False says nothing: the search stops at the first such
	// sequence, and once a hit that is no -inf in a forward call is seen.
	NoBackward bool
	// Partial: ScanUntilSevere stopped after the window holding the first
	// hit that may be NaN or +Inf; the spans are those of the bytes before
	// Searched, and Whole and NoBackward say nothing (both false).
	Partial  bool
	Searched int64
	// Groups are the "group_ranks" lists of the bytes before GroupsTo (all
	// of them, unless the search stopped early: see Partial); ReadGroups
	// reads those of the rest. Valid until the Prefilter's next search.
	Groups   *GroupRanks
	GroupsTo int64
}

// Span is a part of a document, from From to To (both included).
type Span struct{ From, To int64 }

// Clear reports whether the file holds no non-finite value, looks whole and
// has statistics: it need not be parsed.
func (h *Hits) Clear() bool {
	return len(h.Spans) == 0 && h.Whole && (h.Tensors == 0 || h.Stats > 0)
}

// Within reports whether [from, to) may hold a hit: whether it meets a
// span.
func (h *Hits) Within(from, to int64) bool {
	i := h.SpanAfter(from)
	return i < len(h.Spans) && h.Spans[i].From < to
}

// SpanAfter is the index of the first span that ends at or after off, or
// len(h.Spans).
func (h *Hits) SpanAfter(off int64) int {
	i, _ := slices.BinarySearchFunc(h.Spans, off, func(s Span, off int64) int { return cmp.Compare(s.To, off) })
	return i
}

// hit records a suspect token at off; neg says it can only be -inf.
func (p *Prefilter) hit(off int64, neg bool) {
	if !neg && (p.hits.FirstSevere < 0 || off < p.hits.FirstSevere) {
		p.hits.FirstSevere = off
	}
	sp := p.hits.Spans
	if n := len(sp); n > 0 && off >= sp[n-1].From {
		// the usual case, at or after the last span: no search
		switch last := &sp[n-1]; {
		case off <= last.To:
		case off-last.To <= p.gap:
			last.To = off
		default:
			p.hits.Spans = append(sp, Span{off, off})
			p.fit()
		}
		return
	}
	// the candidates of one window are found byte by byte, in turn, so a
	// hit may come before the last one
	i := p.hits.SpanAfter(off)
	switch {
	case i < len(sp) && sp[i].From <= off:
		return // in a span
	case i > 0 && off-sp[i-1].To <= p.gap:
		sp[i-1].To = off
		if i < len(sp) && sp[i].From-off <= p.gap {
			sp[i-1].To = sp[i].To
			sp = slices.Delete(sp, i, i+1)
		}
	case i < len(sp) && sp[i].From-off <= p.gap:
		sp[i].From = off
	default:
		sp = slices.Insert(sp, i, Span{off, off})
	}
	p.hits.Spans = sp
	p.fit()
}

// fit merges the spans closest to each other until they are no more than
// the Prefilter keeps.
func (p *Prefilter) fit() {
	for len(p.hits.Spans) > p.max {
		p.gap = max(2*p.gap, 256)
		p.hits.Spans = mergeSpans(p.hits.Spans, p.gap)
	}
}

// mergeSpans merges, in place, the spans that lie within gap bytes of the
// one before.
func mergeSpans(sp []Span, gap int64) []Span {
	out := sp[:1]
	for _, s := range sp[1:] {
		if last := &out[len(out)-1]; s.From-last.To <= gap {
			last.To = s.To
			continue
		}
		out = append(out, s)
	}
	return out
}
