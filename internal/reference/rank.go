package reference

import (
	"path/filepath"
	"slices"
	"sort"
)

// rankData is one rank's step: its entries in file order with their
// phases and collective instances.
type rankData struct {
	rank    int
	status  fileStatus
	problem string
	entries []*entry
	// instances maps every collective instance to the rank's entry and side.
	instances map[instKey]instRef
	// clocks lists, per pairing key, the rank's instances in file order.
	clocks map[clockKey][]instRef
	// named are the ranks its group_ranks lists name (README 9).
	named []int
}

type instRef struct {
	e    *entry
	side *collSide
	k    int
}

// loadRank reads one rank folder.
func loadRank(dir, dumpPath string, rank int) *rankData {
	df := readDump(dumpPath)
	r := &rankData{rank: rank, status: df.status, problem: df.problem,
		instances: map[instKey]instRef{}, clocks: map[clockKey][]instRef{}}
	if df.status == fileUnread {
		return r
	}
	for i, m := range df.entries {
		r.entries = append(r.entries, buildEntry(i, m, rank))
	}
	r.named = df.named
	assignPhases(r.entries, readConstruct(filepath.Join(dir, "construct.json")), readStacks(filepath.Join(dir, "stack.json")), df.status == fileRead)
	counters := map[clockKey]int{}
	for _, e := range r.entries {
		if e.coll == nil {
			continue
		}
		for _, s := range e.coll.sides {
			if s.clock.kind != keyName {
				s.k = counters[s.clock]
				counters[s.clock]++
			}
			ref := instRef{e: e, side: s, k: s.k}
			if _, dup := r.instances[s.inst()]; !dup {
				r.instances[s.inst()] = ref
			}
			r.clocks[s.clock] = append(r.clocks[s.clock], ref)
		}
	}
	return r
}

// Roles of a rank's first sign (README section 5).
const (
	signSent      = "sent"
	signReceived  = "received"
	signInherited = "inherited"
	signBirth     = "birth"
	signFlagged   = "flagged"
)

// sign is how a rank first met the anomaly in a step.
type sign struct {
	first    *entry
	role     string // role of the first sign
	root     *entry
	rootRole string // role of the root (a promoted root is a birth)
	kind     string // nan, inf or overflow
	promoted bool
}

// kindOf names what a set of severe values holds.
func kindOf(h holds) string {
	if h.has(holdNaN) {
		return "nan"
	}
	return "inf"
}

// firstSign walks the rank's entries in file order.
func (r *rankData) firstSign() *sign {
	for _, e := range r.entries {
		s := &sign{first: e, root: e}
		switch {
		case e.coll != nil && e.sent() != 0:
			s.role, s.kind = signSent, kindOf(e.sent())
		case e.coll != nil && e.received() != 0:
			s.role, s.kind = signReceived, kindOf(e.received())
		case e.coll == nil && e.severeIn() != 0:
			s.role, s.kind = signInherited, kindOf(e.severeIn())
		case e.coll == nil && e.severeOut() != 0:
			s.role, s.kind = signBirth, kindOf(e.severeOut())
		case e.flagged:
			s.role, s.kind = signFlagged, "overflow"
		default:
			continue
		}
		s.rootRole = s.role
		if s.role == signBirth || s.role == signInherited {
			r.promote(s)
		}
		return s
	}
	return nil
}

// promote applies the -inf exception: when the first sign's only
// non-finite input is -inf, the first earlier entry that made a new -inf
// after the last legitimate -inf source is the root.
func (r *rankData) promote(s *sign) {
	if s.first.anyIn() != holdNegInf {
		return
	}
	lastLegit := -1
	for _, e := range r.entries[:s.first.index] {
		if e.legitNegInf {
			lastLegit = e.index
		}
	}
	for _, e := range r.entries[lastLegit+1 : s.first.index] {
		if e.coll == nil && e.anyOut().has(holdNegInf) && !e.anyIn().has(holdNegInf) {
			s.root, s.rootRole, s.kind, s.promoted = e, signBirth, "inf", true
			return
		}
	}
}

// firstNaNFrom is the first entry at or after index from whose output
// holds NaN (a collective: that received NaN).
func (r *rankData) firstNaNFrom(from int) *entry {
	i := slices.IndexFunc(r.entries, func(e *entry) bool { return e.index >= from && e.madeNaN() })
	if i < 0 {
		return nil
	}
	return r.entries[i]
}

// madeNaN: the entry's output holds NaN, a collective's what it received.
func (e *entry) madeNaN() bool {
	out := e.anyOut()
	if e.coll != nil {
		out = e.received()
	}
	return out.has(holdNaN)
}

// statlessMost: more than half of the rank's entries are stat-less.
func (r *rankData) statlessMost() bool {
	n := 0
	for _, e := range r.entries {
		if e.statless {
			n++
		}
	}
	return len(r.entries) > 0 && 2*n > len(r.entries)
}

func sortedInts(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	sort.Ints(out)
	return out
}
