package trace

import (
	"slices"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"
)

// signs keeps, while a rank's entries are read in file order, the calls
// its account of the step needs (analyse; README "How it decides", 5),
// and only those, so that no cap can drop one:
//
//   - the first call that is an anomaly wherever it lies (certainlySevere);
//   - the first call holding only -inf since the latest backward entry:
//     an anomaly when no backward entry follows it (after B₂, -inf is
//     severe), which only the end of the file tells;
//   - for each of those two, the first -inf birth since the latest
//     legitimate -inf source before it: the root the first sign is
//     promoted to when it grew from that -inf;
//   - the first call whose output holds NaN (a collective: that received
//     NaN): every such call is an anomaly, so it lies at or after the
//     first sign and its root, and it is the first NaN;
//   - the collectives kept whole (rankScan.colls), each with its call;
//   - the first births, which the verdict lists (candidates, and -inf
//     that never grew into an anomaly), up to the births limit.
//
// Everything before the latest backward entry is not after B₂, and
// everything before the latest legitimate -inf source is no promoted
// root: both are dropped as the walk passes them.
type signs struct {
	births    int      // how many births to list
	certain   *event   // the first call that is certainly an anomaly
	certRoot  *event   // grownFrom when certain was read
	negAfter  *event   // the first call holding only -inf since the latest backward entry
	negRoot   *event   // grownFrom when negAfter was read
	grownFrom *event   // the first -inf birth since the latest legitimate -inf source
	firstNaN  *event   // the first call with NaN output
	born      []*event // the first births, in file order
	colls     []*event // the calls of the collectives kept whole
}

// interesting reports whether a call that is not a collective may matter
// to the rank's account: it holds a non-finite value that is severe
// somewhere (NaN or +inf, a gradient, a weight), or a -inf that it made
// or that lies after a backward entry (then maybe after the last).
func (s *rankScan) interesting(ev *event, n dump.Name) bool {
	all := ev.in | ev.out | ev.birth
	if all == 0 {
		return false
	}
	severe := all&(nonfinite.NaN|nonfinite.PosInf) != 0 || n.IsBackward() || ev.param != 0
	return severe || ev.birth != 0 || s.firstBwd >= 0
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
	return ev.in|ev.out != 0 && (ev.dir == notation.Backward || ev.dir == notation.ParamGrad || ev.param != 0)
}

// offer looks at a call that interesting (or a kept collective, or a
// flag) picked, and keeps what the account needs of it. certain is
// certainlySevere; afterBackward says a backward entry came before it.
// Calls are offered in file order, except the masks the walk parses again
// at the end (walker.parseDeferred), which lie after every other call of
// their kind: "first" is decided by index.
func (k *signs) offer(ev *event, s *rankScan, certain, afterBackward bool) {
	var kept *event
	keep := func() *event {
		if kept == nil {
			kept = new(event)
			*kept = *ev
		}
		return kept
	}
	if ev.collIdx >= 0 {
		k.colls = append(k.colls, keep())
	}
	if certain && earlier(ev, k.certain) {
		k.certain, k.certRoot = keep(), k.grownFrom
	}
	if !certain && afterBackward && ev.collIdx < 0 && earlier(ev, k.negAfter) {
		k.negAfter, k.negRoot = keep(), k.grownFrom
	}
	if (ev.out|s.destOf(ev))&nonfinite.NaN != 0 && earlier(ev, k.firstNaN) {
		k.firstNaN = keep()
	}
	if ev.collIdx >= 0 || ev.module || ev.birth == 0 {
		return
	}
	if n := len(k.born); n < k.births || ev.index < k.born[n-1].index {
		i, _ := slices.BinarySearchFunc(k.born, ev.index, func(b *event, i int) int { return b.index - i })
		k.born = slices.Insert(k.born, i, keep())
		k.born = k.born[:min(n+1, k.births)]
	} else {
		reached.births.Add(1)
	}
	if ev.birth&nonfinite.NegInf != 0 && earlier(ev, k.grownFrom) {
		k.grownFrom = keep()
	}
}

// earlier reports whether ev comes before kept, or nothing is kept.
func earlier(ev, kept *event) bool { return kept == nil || ev.index < kept.index }

// backwardEntry forgets the -inf call kept as maybe after the last
// backward entry: one has followed it.
func (k *signs) backwardEntry() { k.negAfter, k.negRoot = nil, nil }

// legitimateNegInf forgets the -inf birth kept as a root to promote to: a
// legitimate -inf source has followed it.
func (k *signs) legitimateNegInf() { k.grownFrom = nil }

// nanSeen reports whether a call with NaN output was kept.
func (k *signs) nanSeen() bool { return k.firstNaN != nil }

// events returns the calls kept, once each, in file order: what analyse
// reads.
func (k *signs) events() []event {
	all := append([]*event{k.certain, k.certRoot, k.negAfter, k.negRoot, k.firstNaN}, k.born...)
	all = append(all, k.colls...)
	all = slices.DeleteFunc(all, func(ev *event) bool { return ev == nil })
	slices.SortFunc(all, func(a, b *event) int { return a.index - b.index })
	all = slices.Compact(all)
	out := make([]event, len(all))
	for i, ev := range all {
		out[i] = *ev
	}
	return out
}

// growsFromNegInf reports whether the rank's first anomaly holds no
// non-finite input but -inf: it may have grown from a -inf that an earlier
// forward call made, which the mask rule of the walk passed over.
func (s *rankScan) growsFromNegInf() bool {
	for i := range s.events {
		if ev := &s.events[i]; s.isSevere(ev) {
			return ev.collIdx < 0 && ev.in == nonfinite.NegInf
		}
	}
	return false
}
