package trace

import (
	"slices"
	"sort"
)

// hop is one collective call that moved the anomaly from ranks that held it
// to ranks that did not.
type hop struct {
	key      string
	op       string // entry name on the first sender (or receiver when no sender is known)
	order    int    // index of that entry: orders hops
	from, to []int
	missing  []int // participants that were not read (not dumped, damaged)
	group    []int
	inferred bool // from was inferred: the senders kept too many collectives to keep this one
}

// stepResult is the cross-rank account of one step.
type stepResult struct {
	step      int
	mode      string
	ranks     []int
	scans     map[int]*rankScan
	locals    map[int]*local
	anomalous bool

	sources    []int // ranks where it was born, or first seen when not captured
	collOrigin *hop  // a collective that made it from clean inputs on every rank
	hops       []*hop
	unrecorded []int // ranks that got it through a path the dump does not show
}

// analyseStep puts the ranks of one step together.
func analyseStep(step int, mode string, scans map[int]*rankScan) *stepResult {
	r := &stepResult{step: step, mode: mode, scans: scans, locals: map[int]*local{}}
	for rank := range scans {
		r.ranks = append(r.ranks, rank)
	}
	sort.Ints(r.ranks)
	for _, rank := range r.ranks {
		l := scans[rank].local
		r.locals[rank] = l
		if l.first != nil {
			r.anomalous = true
		}
	}
	if !r.anomalous {
		return r
	}

	// Every rank's view of every non-finite collective, by pairing key.
	inst := map[string]map[int]*collEvent{}
	for _, rank := range r.ranks {
		s := scans[rank]
		for i := range s.colls {
			c := &s.colls[i]
			if inst[c.key] == nil {
				inst[c.key] = map[int]*collEvent{}
			}
			inst[c.key][rank] = c
		}
	}

	hops := map[string]*hop{}
	for _, rank := range r.ranks {
		l := r.locals[rank]
		if l.role != roleReceived {
			continue
		}
		c := scans[rank].collOf(l.first)
		h := hops[c.key]
		if h == nil {
			h = &hop{key: c.key, op: c.name, order: c.index, group: c.group}
			for _, other := range sortedKeys(inst[c.key]) {
				oc := inst[c.key][other]
				if oc.send != 0 {
					h.from = append(h.from, other)
					if len(h.from) == 1 {
						h.op, h.order = oc.name, oc.index
					}
				}
			}
			if len(h.from) == 0 {
				h.from = r.beyondCap(c, rank)
				h.inferred = len(h.from) > 0
			}
			if len(h.from) == 0 {
				h.missing = r.unread(c)
			}
			hops[c.key] = h
		}
		h.to = append(h.to, rank)
	}

	for _, rank := range r.ranks {
		switch r.locals[rank].role {
		case roleBirth, roleInherited, roleSentBad, roleFlagged:
			r.sources = append(r.sources, rank)
		}
	}
	r.demoteLateUncaptured()

	for _, h := range hops {
		r.hops = append(r.hops, h)
	}
	sort.Slice(r.hops, func(i, j int) bool {
		if r.hops[i].order != r.hops[j].order {
			return r.hops[i].order < r.hops[j].order
		}
		return r.hops[i].key < r.hops[j].key
	})
	for _, h := range r.hops {
		if len(h.from) > 0 {
			continue
		}
		// A sender whose dump ends before the collective is still known
		// when it already held the value: a source among the unread.
		for _, m := range h.missing {
			if slices.Contains(r.sources, m) {
				h.from = append(h.from, m)
			}
		}
		if len(h.from) == 0 && len(h.missing) == 0 && r.collOrigin == nil {
			// clean inputs everywhere, non-finite result: the collective itself
			r.collOrigin = h
		}
	}
	return r
}

// demoteLateUncaptured: when some ranks show a captured birth, ranks whose
// first sign is an already non-finite input later in the step did not make
// it themselves; they received it through something the dump does not
// record (DDP's bucket all-reduce and other collectives issued from C++).
func (r *stepResult) demoteLateUncaptured() {
	earliest := -1
	for _, rank := range r.sources {
		l := r.locals[rank]
		if l.role == roleBirth || l.role == roleFlagged {
			if earliest < 0 || l.first.index < earliest {
				earliest = l.first.index
			}
		}
	}
	if earliest < 0 {
		return
	}
	kept := r.sources[:0]
	for _, rank := range r.sources {
		l := r.locals[rank]
		if (l.role == roleInherited || l.role == roleSentBad) && l.first.index > earliest {
			r.unrecorded = append(r.unrecorded, rank)
			continue
		}
		kept = append(kept, rank)
	}
	r.sources = kept
}

// beyondCap lists the participants that may have sent the value although
// the call is not among the collectives they kept (each rank keeps only its
// first maxCollEvents non-finite collectives): those that held an anomaly
// and ran out of room.
func (r *stepResult) beyondCap(c *collEvent, receiver int) []int {
	parts := c.group
	if parts == nil {
		parts = r.ranks
	}
	var out []int
	for _, p := range parts {
		s, ok := r.scans[p]
		if ok && p != receiver && s.collsFull && r.locals[p].first != nil {
			out = append(out, p)
		}
	}
	return out
}

// unread lists the participants of a collective whose side of it is not
// known: not dumped, unreadable, or cut short.
func (r *stepResult) unread(c *collEvent) []int {
	parts := c.group
	if parts == nil {
		parts = r.ranks
	}
	var out []int
	for _, p := range parts {
		s, ok := r.scans[p]
		if !ok || s.openErr != nil || s.damage != nil {
			out = append(out, p)
		}
	}
	return out
}

// carrier is the first hop that left a source rank (or the first hop).
func (r *stepResult) carrier() *hop {
	src := map[int]bool{}
	for _, s := range r.sources {
		src[s] = true
	}
	for _, h := range r.hops {
		for _, f := range h.from {
			if src[f] {
				return h
			}
		}
	}
	for _, h := range r.hops {
		if h != r.collOrigin {
			return h
		}
	}
	return nil
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
