package trace

import (
	"slices"
	"sort"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/verdict"
)

// hop is one collective instance that moved the anomaly from ranks that
// held it to ranks that did not.
type hop struct {
	key       string
	op        string // entry name on the lowest sender (on the lowest receiver when no sender is known)
	opRank    int    // the rank op names
	opIndex   int    // the index of op on opRank
	from, to  []int
	unseen    []int // participants whose side of the call was not read (not dumped, unread, damaged before it)
	group     []int
	inferred  bool // from was inferred: the senders' side was not kept (caps), or not read and they are sources
	collOrig  bool // no sender, every side read: the collective made it
	senderIdx map[int]int
}

// stepResult is the cross-rank account of one step (README "How it
// decides", 6).
type stepResult struct {
	step      int
	mode      string
	ranks     []int // the ranks with a folder for the step
	scans     map[int]*rankScan
	locals    map[int]*local
	anomalous bool

	sources     []int  // origin ranks: births (or, with none, the earliest candidates)
	collOrigins []*hop // collectives that made it from clean inputs, when there are no sources
	hops        []*hop // every hop, in spread order (collective origins included)
	inherited   []int  // candidates that are not sources: received through a path the dump does not record
	later       []int  // births after another candidate's first sign
	unreadRanks []int  // ranks whose dump could not be read
	missing     []int  // ranks of the job without a folder for the step (absent and notDumped)
	absent      []int  // ranks with a folder at another analysed step, not at this one: unread here
	absentWhy   string // why: no folder, or the step folder could not be listed
	noSummary   []int  // the absent ranks that are a missing node's (a join): no summary holds them
	noDump      []int  // ranks whose folder holds no dump.json (in missing: no scan is made of them)
	// unknownRanks: a missing node's ranks cannot be told (a join), so the
	// step is not read whole whatever its unread rows say
	unknownRanks bool
	notDumped    []int // ranks of the job with a folder at no analysed step
	// unread are the expected rank-steps not read whole (README "How it
	// decides", 9), by reason; none when the step was read whole.
	unread []verdict.UnreadRanks
	// p2p are the receives that took their paired send's phase
	p2p []p2pFix
}

// slim is the part of a step the verdict uses once a later step is read:
// which step it was and its ranks. A step of thousands of ranks holds
// tens of megabytes of scans; the clean step before the anomalous one
// must not double that.
func (r *stepResult) slim() *stepResult {
	return &stepResult{step: r.step, mode: r.mode, ranks: r.ranks, unread: r.unread, unknownRanks: r.unknownRanks}
}

// whole reports whether every expected rank of the step was read whole.
func (r *stepResult) whole() bool { return len(r.unread) == 0 && !r.unknownRanks }

// status is the step's status when it holds no anomaly: clean only when
// it was read whole.
func (r *stepResult) cleanStatus() string {
	switch {
	case r.whole():
		return "clean"
	case len(unreadRanksOf(r.unread)) >= len(r.ranks)+len(r.absent)+len(r.noDump):
		return "unread"
	}
	return "incomplete"
}

// analyseStep puts the ranks of one step together.
func analyseStep(step int, mode string, scans map[int]*rankScan, job roster) *stepResult {
	r := &stepResult{step: step, mode: mode, scans: scans, locals: map[int]*local{}, unknownRanks: job.unknownRanks}
	for rank := range scans {
		r.ranks = append(r.ranks, rank)
	}
	sort.Ints(r.ranks)
	for _, rank := range r.ranks {
		s := scans[rank]
		l := s.local
		if l == nil {
			l = &local{}
		}
		r.locals[rank] = l
		if l.first != nil {
			r.anomalous = true
		}
		if s.unread() {
			r.unreadRanks = append(r.unreadRanks, rank)
		}
	}
	all := job.ranksAt(scans)
	r.missing = make([]int, 0, max(0, len(all)-len(scans)))
	for _, rk := range all {
		if _, ok := scans[rk]; ok {
			continue
		}
		r.missing = append(r.missing, rk)
		switch {
		case job.hasNoDump(step, rk):
			// its folder holds no dump.json: unread, with no scan made
			r.unreadRanks = append(r.unreadRanks, rk)
			r.noDump = append(r.noDump, rk)
		case job.known[rk]:
			r.absent = append(r.absent, rk)
			if job.unsummarised[rk] {
				r.noSummary = append(r.noSummary, rk)
			}
		default:
			r.notDumped = append(r.notDumped, rk)
		}
	}
	r.absentWhy = job.absentReason(step)
	r.unread = r.unreadList()
	if !r.anomalous {
		return r
	}
	r.findHops()
	r.p2pStages()
	r.findSources()
	for _, h := range r.hops {
		if len(h.from) == 0 {
			// a source whose side of the call was not read sent it
			for _, u := range h.unseen {
				if slices.Contains(r.sources, u) {
					h.from = append(h.from, u)
					h.inferred = true
				}
			}
		}
		h.collOrig = len(h.from) == 0 && len(h.unseen) == 0
	}
	if len(r.sources) == 0 {
		for _, h := range r.hops {
			if h.collOrig {
				r.collOrigins = append(r.collOrigins, h)
			}
		}
	}
	r.orderHops()
	return r
}

// findHops makes a hop of every collective instance that was a receiver's
// first sign.
func (r *stepResult) findHops() {
	r.sendersAgain()
	inst := map[string]map[int]*collEvent{}
	for _, rank := range r.ranks {
		s := r.scans[rank]
		for i := range s.colls {
			c := &s.colls[i]
			if inst[c.key] == nil {
				inst[c.key] = map[int]*collEvent{}
			}
			inst[c.key][rank] = c
		}
	}
	byKey := map[string]*hop{}
	for _, rank := range r.ranks {
		l := r.locals[rank]
		if l.role != roleReceived {
			continue
		}
		c := r.scans[rank].collOf(l.first)
		h := byKey[c.key]
		if h == nil {
			h = &hop{key: c.key, op: c.name, opRank: rank, opIndex: c.index, group: c.group, senderIdx: map[int]int{}}
			for _, other := range sortedKeys(inst[c.key]) {
				if oc := inst[c.key][other]; oc.send != 0 {
					h.from = append(h.from, other)
					h.senderIdx[other] = oc.index
				}
			}
			if len(h.from) == 0 {
				h.from = r.beyondCap(c, rank)
				h.inferred = len(h.from) > 0
			}
			h.unseen = r.unseen(c)
			if len(h.from) > 0 {
				h.opRank = h.from[0]
				if oc, ok := inst[c.key][h.opRank]; ok {
					h.op, h.opIndex = oc.name, oc.index
				}
			}
			byKey[c.key] = h
			r.hops = append(r.hops, h)
		}
		h.to = append(h.to, rank)
	}
	for _, h := range r.hops {
		h.from = slices.DeleteFunc(h.from, func(x int) bool { return slices.Contains(h.to, x) })
	}
}

// findSources orders the candidates by the collectives between them and
// keeps the earliest: the births among them, or all of them when none is a
// birth (README "How it decides", 6.3-6.4).
func (r *stepResult) findSources() {
	var cands []int
	for _, rank := range r.ranks {
		switch r.locals[rank].role {
		case roleBirth, roleInherited, roleSentBad, roleFlagged:
			cands = append(cands, rank)
		}
	}
	late := map[int]bool{}
	for _, y := range cands {
		for _, x := range cands {
			if x != y && happenedBefore(r.scans[x], r.scans[y]) {
				late[y] = true
				break
			}
		}
	}
	births := false
	for _, c := range cands {
		if role := r.locals[c].role; !late[c] && (role == roleBirth || role == roleFlagged) {
			births = true
		}
	}
	for _, c := range cands {
		role := r.locals[c].role
		isBirth := role == roleBirth || role == roleFlagged
		switch {
		case late[c] && isBirth:
			r.later = append(r.later, c)
		case late[c]:
			r.inherited = append(r.inherited, c)
		case births && !isBirth:
			r.inherited = append(r.inherited, c)
		default:
			r.sources = append(r.sources, c)
		}
	}
}

// orderHops puts the hops in the order the value travelled, as far as the
// collectives tell it: a hop whose senders received through another hop
// comes after it; otherwise by lowest sender and its own order.
func (r *stepResult) orderHops() {
	anchor := func(h *hop) (int, int) {
		if len(h.from) > 0 {
			return h.from[0], h.senderIdx[h.from[0]]
		}
		return h.opRank, h.opIndex
	}
	less := func(a, b *hop) bool {
		ra, ia := anchor(a)
		rb, ib := anchor(b)
		if ra != rb {
			return ra < rb
		}
		if ia != ib {
			return ia < ib
		}
		return a.key < b.key
	}
	receivedVia := map[int]*hop{}
	for _, h := range r.hops {
		for _, t := range h.to {
			receivedVia[t] = h
		}
	}
	var out []*hop
	placed := map[*hop]bool{}
	for len(out) < len(r.hops) {
		var ready []*hop
		for _, h := range r.hops {
			if placed[h] {
				continue
			}
			ok := true
			for _, f := range h.from {
				if g := receivedVia[f]; g != nil && g != h && !placed[g] {
					ok = false
				}
			}
			if ok {
				ready = append(ready, h)
			}
		}
		if len(ready) == 0 { // a cycle: cannot happen with first signs, but never loop
			for _, h := range r.hops {
				if !placed[h] {
					ready = append(ready, h)
				}
			}
		}
		sort.Slice(ready, func(i, j int) bool { return less(ready[i], ready[j]) })
		placed[ready[0]] = true
		out = append(out, ready[0])
	}
	r.hops = out
}

// beyondCap lists the participants that may have sent the value although
// the call is not among the collectives they kept (each rank keeps only its
// first colls (scanLimits) non-finite collectives, and reads the others it
// needs again, sendersAgain): those that held an anomaly and could not
// read them again.
func (r *stepResult) beyondCap(c *collEvent, receiver int) []int {
	var out []int
	for _, p := range r.participants(c) {
		s, ok := r.scans[p]
		if ok && p != receiver && s.collsLost && r.locals[p].first != nil {
			out = append(out, p)
		}
	}
	return out
}

// participants of a collective: its group, the two peers, or every rank.
func (r *stepResult) participants(c *collEvent) []int {
	switch {
	case c.group != nil:
		return c.group
	case c.p2p == 1 || c.p2p == -1:
		if c.peer >= 0 {
			return []int{c.peer}
		}
	}
	all := append(append([]int{}, r.ranks...), r.missing...)
	sort.Ints(all)
	return all
}

// unseen lists the participants of a collective whose side of it was not
// read: not dumped, unreadable, or cut short before it.
func (r *stepResult) unseen(c *collEvent) []int {
	k := occurrence(c.key)
	if c.named {
		k = dump.ParseName(c.name).Call
	}
	var out []int
	for _, p := range r.participants(c) {
		s, ok := r.scans[p]
		switch {
		case !ok, s.unread():
			out = append(out, p)
		case s.damage != nil && s.seen != nil && s.seen[c.base] <= int32(k):
			out = append(out, p)
		}
	}
	return out
}

// occurrence is the k of a key "base#k"; -1 for named keys.
func occurrence(key string) int {
	i := len(key) - 1
	for i >= 0 && key[i] >= '0' && key[i] <= '9' {
		i--
	}
	if i < 0 || key[i] != '#' || i == len(key)-1 {
		return -1
	}
	k := 0
	for _, c := range key[i+1:] {
		k = k*10 + int(c-'0')
		if k > 1<<30 {
			return -1
		}
	}
	return k
}

// carrier is the first hop that the lowest source rank sent in (in that
// rank's order); with none, the first hop of the lowest sender; when no
// sender was read, the first hop of the lowest receiver. Collective origins
// are not carriers. It returns the hop and the rank whose entry names it.
func (r *stepResult) carrier() (*hop, int) {
	best, bestRank, bestIdx := (*hop)(nil), -1, 0
	consider := func(h *hop, rank int) {
		idx, ok := h.senderIdx[rank]
		if !ok {
			idx = 1 << 30 // inferred: its side was not kept
		}
		if best == nil || rank < bestRank || (rank == bestRank && idx < bestIdx) {
			best, bestRank, bestIdx = h, rank, idx
		}
	}
	for _, h := range r.hops {
		if h.collOrig {
			continue
		}
		for _, f := range h.from {
			if slices.Contains(r.sources, f) {
				consider(h, f)
			}
		}
	}
	if best != nil {
		return best, bestRank
	}
	for _, h := range r.hops {
		if !h.collOrig && len(h.from) > 0 {
			consider(h, h.from[0])
		}
	}
	if best != nil {
		return best, bestRank
	}
	// no sender was read: the hop the lowest receiver met first
	for _, h := range r.hops {
		if !h.collOrig && (best == nil || h.opRank < best.opRank || (h.opRank == best.opRank && h.opIndex < best.opIndex)) {
			best, bestRank = h, h.opRank
		}
	}
	return best, bestRank
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
