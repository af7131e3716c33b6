package reference

import (
	"math"
	"slices"
)

// README 6.7: the carrier and the spread. Hops that are collective
// origins carry nothing.

// sideEntry is rank's entry for an instance, nil when its side was not read.
func (r *stepResult) sideEntry(rank int, key instKey) *entry {
	rd := r.data.read(rank)
	if rd == nil {
		return nil
	}
	return rd.instances[key].e
}

// carrying are the step's hops that are not collective origins, in order.
func (r *stepResult) carrying() []*hop {
	return slices.DeleteFunc(slices.Clone(r.hops), func(h *hop) bool { return h.madeHere })
}

// chooseCarrier picks among hops the rank whose own order decides and that
// rank's earliest hop: the lowest source that sent in one, else the lowest
// sender, else (no sender read) the lowest receiver. A presumed sender's
// unread side comes after its read ones; ties keep the hops' order.
func (r *stepResult) chooseCarrier(hops []*hop) (*hop, int) {
	in := func(pick func(*hop) []int) func(rank int) []*hop {
		return func(rank int) []*hop {
			var mine []*hop
			for _, h := range hops {
				if slices.Contains(pick(h), rank) {
					mine = append(mine, h)
				}
			}
			return mine
		}
	}
	sentIn := in(func(h *hop) []int { return h.senders })
	receivedIn := in(func(h *hop) []int { return h.receivers })

	var senders, receivers []int
	for _, h := range hops {
		senders = append(senders, h.senders...)
		receivers = append(receivers, h.receivers...)
	}
	rank, of := -1, sentIn
	if i := slices.IndexFunc(r.sources, func(s int) bool { return slices.Contains(senders, s) }); i >= 0 {
		rank = r.sources[i]
	} else if len(senders) > 0 {
		rank = slices.Min(senders)
	} else if len(receivers) > 0 {
		rank, of = slices.Min(receivers), receivedIn
	}
	if rank < 0 {
		return nil, -1
	}
	return r.earliestOn(rank, of(rank)), rank
}

// earliestOn is the hop that comes first in rank's own file.
func (r *stepResult) earliestOn(rank int, hops []*hop) *hop {
	position := func(h *hop) int {
		if e := r.sideEntry(rank, h.inst); e != nil {
			return e.index
		}
		return math.MaxInt
	}
	best := hops[0]
	for _, h := range hops[1:] {
		if position(h) < position(best) {
			best = h
		}
	}
	return best
}

// describe is a hop as the verdict lists it: named by the entry on rank
// when that side was read, else on its lowest sender, else on its lowest
// receiver.
func (r *stepResult) describe(h *hop, rank int) Hop {
	names := append(append([]int{rank}, h.senders...), h.receivers...)
	op := ""
	for _, who := range names {
		if e := r.sideEntry(who, h.inst); who >= 0 && e != nil {
			op = e.name
			break
		}
	}
	return Hop{Step: r.data.step, Op: op, FromRanks: ints(h.senders), ToRanks: ints(h.receivers)}
}

// carrierAndSpread is the step's carrier (nil when no hop carries) and
// every carrying hop, carrier included.
func (r *stepResult) carrierAndSpread() (*Hop, []Hop) {
	hops := r.carrying()
	chosen, on := r.chooseCarrier(hops)
	var carrier *Hop
	spread := []Hop{}
	for _, h := range hops {
		if h == chosen {
			c := r.describe(h, on)
			carrier = &c
			spread = append(spread, c)
			continue
		}
		spread = append(spread, r.describe(h, -1))
	}
	return carrier, spread
}

// carrierInto is, at the checked step next, the first hop into a rank that
// had no first sign at the origin step (README 7).
func (r *stepResult) carrierInto(next *stepResult) *Hop {
	var into []*hop
	for _, h := range next.carrying() {
		if slices.ContainsFunc(h.receivers, func(rc int) bool { return r.signs[rc] == nil }) {
			into = append(into, h)
		}
	}
	h, on := next.chooseCarrier(into)
	if h == nil {
		return nil
	}
	c := next.describe(h, on)
	return &c
}
