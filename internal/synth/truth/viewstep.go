package truth

import (
	"slices"
	"sort"
)

// The analysis of an anomalous step's view, across its ranks (README 6),
// on the simulation's own collective instances and participants.

func (s *stepView) anomalous() bool {
	for _, v := range s.ranks {
		if v.sign != nil {
			return true
		}
	}
	return false
}

// vHop is one instance that brought the anomaly to ranks whose first sign
// it is.
type vHop struct {
	inst                       instID
	receivers, senders, unseen []int
	collOrigin                 bool
}

// vResult is the analysis of an anomalous step (README 6).
type vResult struct {
	v       *stepView
	hops    []*vHop
	late    map[int]bool
	sources []int
	origin  vOrigin
}

// vOrigin is the origin a step's analysis names.
type vOrigin struct {
	ranks                             []int
	main                              int
	root                              *seenEntry
	kind                              string
	ph                                Phase
	tie, captured, collective, unread bool
	// weights: the simulation knows the root's non-finite inputs are
	// weights an earlier update wrote (README 6.8 infers it, see
	// writtenByUpdate)
	weights bool
	// rule8: README 6.8 reads the origin as weights the update wrote
	rule8    bool
	collHops int
}

func isCand(s *vSign) bool { return s != nil && s.role != "received" }

func isBirth(s *vSign) bool { return s != nil && s.rootRole == "birth" }

// analyse applies README 6 to an anomalous step.
func (s *stepView) analyse() *vResult {
	r := &vResult{v: s, late: map[int]bool{}}
	r.findHops()
	r.findSources()
	r.presume()
	r.findOrigin()
	return r
}

func (r *vResult) findHops() {
	by := map[instID]*vHop{}
	var members = map[instID][]int{}
	for _, v := range r.v.ranks {
		if v.sign == nil || v.sign.role != "received" {
			continue
		}
		c := v.sign.first.coll
		h := by[c.inst]
		if h == nil {
			h = &vHop{inst: c.inst}
			by[c.inst] = h
			members[c.inst] = c.members
			r.hops = append(r.hops, h)
		}
		h.receivers = append(h.receivers, v.rank)
	}
	for _, h := range r.hops {
		for _, m := range members[h.inst] {
			v := r.v.ranks[m]
			e, has := v.insts[h.inst]
			switch {
			case !v.read(), v.status == readDamaged && !has:
				h.unseen = append(h.unseen, m)
			case has && e.coll.send != 0:
				h.senders = append(h.senders, m)
			}
		}
		sort.Ints(h.receivers)
	}
}

// happenedBefore is README 6.2 on the physical instances.
func (r *vResult) happenedBefore(x, y int) bool {
	vx, vy := r.v.ranks[x], r.v.ranks[y]
	px, py := vx.sign.first.pos, vy.sign.first.pos
	for c, ex := range vx.clocks {
		ey, ok := vy.clocks[c]
		if !ok {
			continue
		}
		kx, okx := -1, false
		for _, e := range ex {
			if e.pos >= px {
				kx, okx = e.coll.inst.k, true
				break
			}
		}
		ky, oky := -1, false
		for _, e := range ey {
			if e.pos < py {
				ky, oky = e.coll.inst.k, true
			}
		}
		if okx && oky && kx <= ky {
			return true
		}
	}
	return false
}

func (r *vResult) findSources() {
	var cands []int
	for _, v := range r.v.ranks {
		if isCand(v.sign) {
			cands = append(cands, v.rank)
		}
	}
	for _, c := range cands {
		for _, o := range cands {
			if o != c && r.happenedBefore(o, c) {
				r.late[c] = true
				break
			}
		}
	}
	var early, births []int
	for _, c := range cands {
		if r.late[c] {
			continue
		}
		early = append(early, c)
		if isBirth(r.v.ranks[c].sign) {
			births = append(births, c)
		}
	}
	r.sources = early
	if len(births) > 0 {
		r.sources = births
	}
}

// presume counts a source whose side of a senderless hop was not read as
// its sender.
func (r *vResult) presume() {
	for _, h := range r.hops {
		if len(h.senders) > 0 {
			continue
		}
		for _, u := range h.unseen {
			if slices.Contains(r.sources, u) {
				h.senders = append(h.senders, u)
			}
		}
	}
}

// findOrigin names the origin of the step (README 6.4 to 6.8): its ranks,
// the rank whose first sign stands for them, and what that sign shows.
func (r *vResult) findOrigin() {
	o := &r.origin
	o.ranks, o.collective, o.unread = r.originRanks()
	for _, h := range r.hops {
		if h.collOrigin {
			o.collHops++
		}
	}
	o.main = r.mainRank(o.ranks)
	s := r.v.ranks[o.main].sign
	o.root, o.kind, o.ph = s.root, s.kind, s.root.ph
	if isBirth(s) || o.collective {
		// a birth the dump holds: where the simulation ran it
		o.ph = s.root.phys
	}
	o.tie = len(r.sources) > 1 || o.collHops > 1
	o.captured = isBirth(s) || o.collective
	o.weights = !o.captured && s.root.coll == nil && s.root.weights
	o.rule8 = !o.captured && r.writtenByUpdate(s)
	if o.rule8 {
		o.ph = PhaseOptimizer
	}
}

// originRanks are the source ranks when there are any; else the receivers
// of the hops that nobody sent, read in full (the collective made the
// anomaly: collective); else the participants whose side of a senderless
// hop could not be read (unread). It marks the hops that are origins.
func (r *vResult) originRanks() (ranks []int, collective, unread bool) {
	if len(r.sources) > 0 {
		return slices.Clone(r.sources), false, false
	}
	made := map[int]bool{}
	for _, h := range r.hops {
		if len(h.senders) == 0 && len(h.unseen) == 0 {
			h.collOrigin = true
			for _, rc := range h.receivers {
				made[rc] = true
			}
		}
	}
	if len(made) > 0 {
		return sortedKeys(made), true, false
	}
	for _, h := range r.hops {
		if len(h.senders) == 0 {
			for _, u := range h.unseen {
				made[u] = true
			}
		}
	}
	return sortedKeys(made), false, true
}

// mainRank is the rank whose first sign stands for the origin: the lowest
// of ranks whose sign is a birth, else the lowest with a sign, else the
// lowest rank of a senderless hop.
func (r *vResult) mainRank(ranks []int) int {
	for _, rank := range ranks {
		if isBirth(r.v.ranks[rank].sign) {
			return rank
		}
	}
	for _, rank := range ranks {
		if r.v.ranks[rank].sign != nil {
			return rank
		}
	}
	return r.lowestSenderless()
}

// writtenByUpdate is README 6.8, what the dump can tell of weights that
// the update of the previous step wrote: the first sign's non-finite
// inputs are a module's parameters, or two source ranks or more first show
// it at the same forward entry in inputs that require grad.
func (r *vResult) writtenByUpdate(main *vSign) bool {
	if e := main.root; e.coll == nil && e.in != 0 && e.in == e.inParams {
		return true
	}
	by := map[string]int{}
	for _, rank := range r.sources {
		e := r.v.ranks[rank].sign.root
		if e.coll == nil && e.ph == PhaseForward && e.in != 0 && e.inGrad {
			by[e.name]++
		}
	}
	for _, n := range by {
		if n >= 2 {
			return true
		}
	}
	return false
}

// lowestSenderless is the lowest receiver of the hops without a sender
// (of any hop when there is none).
func (r *vResult) lowestSenderless() int {
	best := -1
	for pass := 0; pass < 2 && best < 0; pass++ {
		for _, h := range r.hops {
			if pass == 0 && len(h.senders) > 0 {
				continue
			}
			for _, rc := range h.receivers {
				if best < 0 || rc < best {
					best = rc
				}
			}
		}
	}
	if best < 0 {
		for _, v := range r.v.ranks {
			if v.sign != nil {
				return v.rank
			}
		}
	}
	return best
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// entryOf is a rank's entry for a hop's instance, nil when not read.
func (r *vResult) entryOf(rank int, h *vHop) *seenEntry {
	return r.v.ranks[rank].insts[h.inst]
}

// carriers are the hops that are not collective origins.
func (r *vResult) carriers() []*vHop {
	var out []*vHop
	for _, h := range r.hops {
		if !h.collOrigin {
			out = append(out, h)
		}
	}
	return out
}

// firstSentBy is the hop rank sent in first, in its own order.
func (r *vResult) firstSentBy(hops []*vHop, rank int) *vHop {
	var best *vHop
	bestAt := 0
	for _, h := range hops {
		if !slices.Contains(h.senders, rank) {
			continue
		}
		at := 1 << 30
		if e := r.entryOf(rank, h); e != nil {
			at = e.pos
		}
		if best == nil || at < bestAt {
			best, bestAt = h, at
		}
	}
	return best
}

// pickCarrier is README 6.7: the first hop the lowest source rank sent
// in, else the first hop of the lowest sender, else of the lowest
// receiver.
func (r *vResult) pickCarrier(hops []*vHop) (*vHop, int) {
	for _, s := range r.sources {
		if h := r.firstSentBy(hops, s); h != nil {
			return h, s
		}
	}
	var senders, receivers []int
	for _, h := range hops {
		senders = append(senders, h.senders...)
		receivers = append(receivers, h.receivers...)
	}
	slices.Sort(senders)
	for _, s := range senders {
		if h := r.firstSentBy(hops, s); h != nil {
			return h, s
		}
	}
	slices.Sort(receivers)
	for _, rc := range receivers {
		var best *vHop
		bestAt := 0
		for _, h := range hops {
			if !slices.Contains(h.receivers, rc) {
				continue
			}
			if at := r.entryOf(rc, h).pos; best == nil || at < bestAt {
				best, bestAt = h, at
			}
		}
		if best != nil {
			return best, rc
		}
	}
	return nil, -1
}

// carrierOf names a hop as README 6.7 does: the entry on the chosen rank,
// else on its lowest sender, else on its lowest receiver.
func (r *vResult) carrierOf(step int, h *vHop, rank int) *Carrier {
	op := ""
	if e := r.entryOf(rank, h); e != nil {
		op = e.name
	}
	for _, list := range [][]int{h.senders, h.receivers} {
		for _, x := range list {
			if e := r.entryOf(x, h); op == "" && e != nil {
				op = e.name
			}
		}
	}
	from := slices.Clone(h.senders)
	sort.Ints(from)
	return &Carrier{Step: step, Op: op, FromRanks: append([]int{}, from...), ToRanks: slices.Clone(h.receivers)}
}
