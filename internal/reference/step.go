package reference

import (
	"slices"
	"sort"
)

// stepData is every dumped rank of one step.
type stepData struct {
	step       int
	unreadable bool              // the step folder could not be listed
	dumped     []int             // ranks with a folder, ascending
	notDumped  []int             // ranks of the job without a folder in the step (README 8)
	ranks      map[int]*rankData // by rank, unread ones included
}

func loadStep(sd stepDir) *stepData {
	d := &stepData{step: sd.step, unreadable: sd.unreadable, ranks: map[int]*rankData{}}
	for _, r := range sd.ranks {
		d.dumped = append(d.dumped, r.rank)
		d.ranks[r.rank] = loadRank(r.dir, r.dump, r.rank)
	}
	sort.Ints(d.dumped)
	return d
}

// read returns the rank's data when its dump.json could be used.
func (d *stepData) read(rank int) *rankData {
	r := d.ranks[rank]
	if r == nil || r.status == fileUnread {
		return nil
	}
	return r
}

// hop is one collective instance that brought a severe value to ranks
// whose first sign it is.
type hop struct {
	inst             instKey
	receivers        []int
	senders          []int
	participants     []int
	unseen           []int
	collectiveOrigin bool
}

// Roles in a step's rows.
const (
	roleSource    = "source"
	roleReceived  = "received"
	roleInherited = "inherited"
	roleLater     = "later"
)

// stepResult is the analysis of one step (README section 6).
type stepResult struct {
	data    *stepData
	signs   map[int]*sign
	hops    []*hop
	sources []int
	late    map[int]bool
	roles   map[int]string
	origin  *stepOrigin
}

// stepOrigin is the origin a step's analysis names.
type stepOrigin struct {
	ranks                             []int
	main                              int
	root                              *entry
	kind, phase                       string
	tie, captured, collective, unread bool
	collectiveHops                    int
	weights                           bool // rule 8: written by the previous update
}

func (r *stepResult) anomalous() bool { return len(r.signs) > 0 }

// analyseStep applies the rules of section 6 to one step.
func analyseStep(d *stepData) *stepResult {
	res := &stepResult{data: d, signs: map[int]*sign{}, late: map[int]bool{}, roles: map[int]string{}}
	for _, rank := range d.dumped {
		if r := d.read(rank); r != nil {
			if s := r.firstSign(); s != nil {
				res.signs[rank] = s
			}
		}
	}
	if !res.anomalous() {
		return res
	}
	res.findHops()
	res.findSources()
	res.presumeSenders()
	res.findOrigin()
	res.assignRoles()
	return res
}

func (r *stepResult) signRanks() []int {
	var out []int
	for rank := range r.signs {
		out = append(out, rank)
	}
	sort.Ints(out)
	return out
}

// findHops makes one hop per instance that is a receiver's first sign.
func (r *stepResult) findHops() {
	byInst := map[instKey]*hop{}
	for _, rank := range r.signRanks() {
		s := r.signs[rank]
		if s.role != signReceived {
			continue
		}
		for _, side := range s.first.coll.sides {
			if side.recv == 0 {
				continue
			}
			h := byInst[side.inst()]
			if h == nil {
				h = &hop{inst: side.inst()}
				byInst[side.inst()] = h
				r.hops = append(r.hops, h)
				h.participants = r.participants(side)
			}
			if !slices.Contains(h.receivers, rank) {
				h.receivers = append(h.receivers, rank)
			}
		}
	}
	d := r.data
	for _, h := range r.hops {
		for _, p := range h.participants {
			rd := d.read(p)
			ref, has := instRef{}, false
			if rd != nil {
				ref, has = rd.instances[h.inst]
			}
			switch {
			case rd == nil, rd.status == fileDamaged && !has:
				h.unseen = append(h.unseen, p)
			case has && ref.side.send != 0:
				h.senders = append(h.senders, p)
			}
		}
		sort.Ints(h.receivers)
	}
}

// participants of an instance: its group's ranks (the dumped ranks for the
// default group and for an unknown group), or the two peers.
func (r *stepResult) participants(side *collSide) []int {
	d := r.data
	switch {
	case side.clock.kind == keyP2P && (side.clock.from < 0 || side.clock.to < 0):
		// a peer the dump does not name: any rank of the job
		ps := append(slices.Clone(d.dumped), d.notDumped...)
		sort.Ints(ps)
		return ps
	case side.clock.kind == keyP2P:
		ps := []int{side.clock.from}
		if side.clock.to != side.clock.from {
			ps = append(ps, side.clock.to)
		}
		sort.Ints(ps)
		return ps
	case side.clock.kind == keyName, side.group.mode == groupDefault:
		// every rank of the job: those dumped and those that were not
		ps := append(slices.Clone(d.dumped), d.notDumped...)
		sort.Ints(ps)
		return ps
	case side.group.ranks != nil:
		ps := slices.Clone(side.group.ranks)
		sort.Ints(ps)
		return slices.Compact(ps)
	}
	// a group known by id or name only: the ranks that recorded the instance
	var ps []int
	for _, rank := range d.dumped {
		if rd := d.read(rank); rd != nil {
			if _, ok := rd.instances[side.inst()]; ok {
				ps = append(ps, rank)
			}
		}
	}
	return ps
}

// happenedBefore: some pairing key shared by both ranks has its first
// instance at or after x's first sign no later than its last instance
// before y's first sign.
func (r *stepResult) happenedBefore(x, y int) bool {
	rx, ry := r.data.read(x), r.data.read(y)
	fx, fy := r.signs[x].first.index, r.signs[y].first.index
	for key := range rx.clocks {
		if _, shared := ry.clocks[key]; !shared {
			continue
		}
		kx, okx := rx.firstFrom(key, fx)
		ky, oky := ry.lastBefore(key, fy)
		if okx && oky && kx <= ky {
			return true
		}
	}
	return false
}

func isCandidate(s *sign) bool {
	switch s.rootRole {
	case signBirth, signInherited, signSent, signFlagged:
		return true
	}
	return false
}

func isBirth(s *sign) bool { return s.rootRole == signBirth || s.rootRole == signFlagged }

// findSources applies the rules on candidates, late ones and sources.
func (r *stepResult) findSources() {
	var cands []int
	for _, rank := range r.signRanks() {
		if isCandidate(r.signs[rank]) {
			cands = append(cands, rank)
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
		if !r.late[c] {
			early = append(early, c)
			if isBirth(r.signs[c]) {
				births = append(births, c)
			}
		}
	}
	if len(births) > 0 {
		r.sources = births
	} else {
		r.sources = early
	}
}

// presumeSenders: a source whose side of a hop without a sender was not
// read counts as its sender (README 6.7).
func (r *stepResult) presumeSenders() {
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

// findOrigin names the origin ranks, the main rank and what the origin is.
func (r *stepResult) findOrigin() {
	o := &stepOrigin{}
	r.origin = o
	switch {
	case len(r.sources) > 0:
		o.ranks = slices.Clone(r.sources)
	default:
		set := map[int]bool{}
		for _, h := range r.hops {
			if len(h.senders) == 0 && len(h.unseen) == 0 {
				h.collectiveOrigin = true
				o.collectiveHops++
				for _, rc := range h.receivers {
					set[rc] = true
				}
			}
		}
		if o.collectiveHops > 0 {
			o.ranks, o.collective = sortedInts(set), true
			break
		}
		o.unread = true
		for _, h := range r.hops {
			if len(h.senders) == 0 {
				for _, u := range h.unseen {
					set[u] = true
				}
			}
		}
		o.ranks = sortedInts(set)
	}
	o.main = -1
	for _, rank := range o.ranks {
		if s := r.signs[rank]; s != nil && isBirth(s) {
			o.main = rank
			break
		}
	}
	if o.main < 0 {
		for _, rank := range o.ranks {
			if r.signs[rank] != nil {
				o.main = rank
				break
			}
		}
	}
	if o.main < 0 {
		o.main = r.lowestSenderlessReceiver()
	}
	s := r.signs[o.main]
	if s == nil {
		return
	}
	o.root, o.kind, o.phase = s.root, s.kind, s.root.phase
	o.tie = len(r.sources) > 1 || o.collectiveHops > 1
	o.captured = isBirth(s) || o.collective
	if !o.captured && r.writtenByUpdate(s) {
		o.weights, o.phase = true, phaseOptimizer
	}
}

// lowestSenderlessReceiver is the lowest receiver of the hops without a
// sender (of any hop when there is none).
func (r *stepResult) lowestSenderlessReceiver() int {
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
		if ranks := r.signRanks(); len(ranks) > 0 {
			best = ranks[0]
		}
	}
	return best
}

// writtenByUpdate is rule 8: the main root's non-finite inputs are all a
// module's parameters, or at least two sources first show it at the same
// forward entry in inputs that all require grad.
func (r *stepResult) writtenByUpdate(main *sign) bool {
	if main.root.coll == nil && allInputs(main.root, func(v value) bool { return v.field == "parameters" }) {
		return true
	}
	byName := map[string]int{}
	for _, rank := range r.sources {
		root := r.signs[rank].root
		if root.coll == nil && root.phase == phaseForward && allInputs(root, func(v value) bool { return v.requiresGrad }) {
			byName[root.name]++
		}
	}
	for _, n := range byName {
		if n >= 2 {
			return true
		}
	}
	return false
}

// allInputs: the entry has non-finite inputs and every one satisfies ok.
func allInputs(e *entry, ok func(value) bool) bool {
	n := 0
	for _, v := range e.inputs {
		if v.holds == 0 {
			continue
		}
		if !ok(v) {
			return false
		}
		n++
	}
	return n > 0
}

// assignRoles gives every rank with a first sign its row role.
func (r *stepResult) assignRoles() {
	for rank, s := range r.signs {
		switch {
		case slices.Contains(r.origin.ranks, rank):
			r.roles[rank] = roleSource
		case r.late[rank] && isBirth(s):
			r.roles[rank] = roleLater
		case s.role == signReceived:
			r.roles[rank] = roleReceived
		default:
			r.roles[rank] = roleInherited
		}
	}
}

// sentBy is the entry of rank for a hop's instance.
func (r *stepResult) entryOf(rank int, h *hop) *entry {
	if rd := r.data.read(rank); rd != nil {
		if ref, ok := rd.instances[h.inst]; ok {
			return ref.e
		}
	}
	return nil
}

// firstHopSentBy is the hop the rank sent in first, in its own order.
func (r *stepResult) firstHopSentBy(hops []*hop, rank int) *hop {
	var best *hop
	bestAt := 0
	for _, h := range hops {
		if !slices.Contains(h.senders, rank) {
			continue
		}
		at := 1 << 30 // a presumed sender whose side was not read: after its read sides
		if e := r.entryOf(rank, h); e != nil {
			at = e.index
		}
		if best == nil || at < bestAt {
			best, bestAt = h, at
		}
	}
	return best
}

// pickCarrier is rule 7: the first hop the lowest source rank that sent in
// one sent in; else the first hop of the lowest-numbered sender.
func (r *stepResult) pickCarrier(hops []*hop) (*hop, int) {
	for _, s := range r.sources {
		if h := r.firstHopSentBy(hops, s); h != nil {
			return h, s
		}
	}
	var senders []int
	for _, h := range hops {
		senders = append(senders, h.senders...)
	}
	slices.Sort(senders)
	for _, s := range senders {
		if h := r.firstHopSentBy(hops, s); h != nil {
			return h, s
		}
	}
	// no sender was read: the first hop of the lowest-numbered receiver
	var receivers []int
	for _, h := range hops {
		receivers = append(receivers, h.receivers...)
	}
	slices.Sort(receivers)
	for _, rc := range receivers {
		var best *hop
		bestAt := 0
		for _, h := range hops {
			if !slices.Contains(h.receivers, rc) {
				continue
			}
			if at := r.entryOf(rc, h).index; best == nil || at < bestAt {
				best, bestAt = h, at
			}
		}
		if best != nil {
			return best, rc
		}
	}
	return nil, -1
}

// carriers are the hops that are not collective origins.
func (r *stepResult) carriers() []*hop {
	var out []*hop
	for _, h := range r.hops {
		if !h.collectiveOrigin {
			out = append(out, h)
		}
	}
	return out
}

// hopOp names a hop by the entry on its lowest sender, else on its lowest
// receiver.
func (r *stepResult) hopOp(h *hop) string {
	for _, list := range [][]int{h.senders, h.receivers} {
		for _, rank := range list {
			if e := r.entryOf(rank, h); e != nil {
				return e.name
			}
		}
	}
	return ""
}
