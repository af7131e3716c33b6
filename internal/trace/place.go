package trace

import (
	"fmt"
	"slices"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
)

// place records where an entry sits in the step: the backward entries'
// span, the ops before the first of them, the entries after the last one,
// the last collective. It reports whether the entry is a backward entry.
func (s *rankScan) place(sc *scanner, e *dump.Entry, n dump.Name) bool {
	switch {
	case n.IsBackward():
		if s.firstBwd < 0 {
			s.firstBwd = e.Index
		}
		s.lastBwd = e.Index
		s.tail, s.tailCut = s.tail[:0], false
		return true
	case s.firstBwd < 0:
		switch op := n.Op(); {
		case s.preOps[op]: // most calls: an op seen before (no copy is made to look it up)
		case len(s.preOps) < s.lim.preOps:
			s.preOps[sc.intern(op)] = true
		default:
			s.preOpsCut = true // the ops the phases ask about are looked up again (opsBefore)
		}
	}
	if n.IsDistributed() {
		s.lastColl = e.Index
	}
	if len(s.tail) < s.lim.tail {
		s.tail = append(s.tail, tailEntry{name: e.Name, index: int32(e.Index)})
	} else {
		s.tailCut = true // read again when the phases need it (eachTail)
	}
	return false
}

// sync records a collective's place among the rank's collectives. Past
// maxBases pairing bases, new ones are not followed, and the scan notes
// it.
func (s *rankScan) sync(ce *collEvent, n dump.Name) {
	if _, ok := s.syncs[ce.base]; !ok && len(s.syncs) >= maxBases {
		s.noteLimit(fmt.Sprintf("more than %d pairing bases (process group and api, or two peers) among its collectives: "+
			"the rest order no rank, so ranks they would order may read as a tie", maxBases))
		return
	}
	k := int32(len(s.syncs[ce.base]))
	if ce.named {
		k = int32(n.Call) // paired by name: the entry counter is the occurrence
	}
	s.syncs[ce.base] = append(s.syncs[ce.base], syncPoint{int32(ce.index), k})
}

// otherGroups is the key under which a rank keeps together the ranks of
// its process groups past the limit; otherOps the op under which it lists
// together the exclusions of ops past the limit.
const (
	otherGroups = "*"
	otherOps    = "*"
)

// shareGroup makes a collective's process group the worker's one copy of
// it, and records it among the rank's groups: one by one up to the limit,
// then their ranks together, which is all the step reads of them (which
// ranks belong to the job).
func (sc *scanner) shareGroup(s *rankScan, ce *collEvent) {
	if ce.group == nil {
		return
	}
	if g, ok := sc.groups[ce.groupKey]; ok {
		ce.group = g
	} else {
		sc.groups[ce.groupKey] = ce.group
	}
	switch _, ok := s.groups[ce.groupKey]; {
	case ok:
	case len(s.groups) < s.lim.groups:
		s.groups[ce.groupKey] = ce.group
	default:
		reached.groups.Add(1)
		s.groups[otherGroups] = unionRanks(s.groups[otherGroups], ce.group)
	}
}

// unionRanks returns the sorted ranks of a (sorted, without repeats) and b.
func unionRanks(a, b []int) []int {
	out := slices.Clone(a)
	for _, r := range b {
		if i, found := slices.BinarySearch(out, r); !found {
			out = slices.Insert(out, i, r)
		}
	}
	return out
}

// suppressKey is a kind of exclusion: an op, a reason and the values.
type suppressKey struct {
	op, reason string
	values     nonfinite.Class
}

// suppression is a group of calls an exclusion rule changed.
type suppression struct {
	suppressKey
	first string // first entry name
	count int
	birth bool
}

// suppress counts one call an exclusion rule changed.
func (s *rankScan) suppress(op, reason string, values nonfinite.Class, entry string, birth bool) {
	s.suppressN(op, reason, values, entry, birth, 1)
}

// suppressN counts n calls an exclusion rule changed. Past the limit of
// kinds, the calls of further ops are counted together under otherOps.
func (s *rankScan) suppressN(op, reason string, values nonfinite.Class, entry string, birth bool, n int) {
	k := suppressKey{op: op, reason: reason, values: values}
	i, ok := s.supIndex[k]
	if !ok && len(s.suppressed) >= s.lim.suppressKeys {
		reached.suppressKeys.Add(1)
		k.op = otherOps
		i, ok = s.supIndex[k]
	}
	if ok {
		s.suppressed[i].count += n
		s.suppressed[i].birth = s.suppressed[i].birth || birth
		return
	}
	s.supIndex[k] = len(s.suppressed)
	s.suppressed = append(s.suppressed, suppression{suppressKey: k, first: entry, count: n, birth: birth})
}

// destOf is what a collective event received; 0 for other calls.
func (s *rankScan) destOf(ev *event) nonfinite.Class {
	if c := s.collOf(ev); c != nil {
		return c.dest
	}
	return 0
}

// collOf returns the collective of an event, or nil.
func (s *rankScan) collOf(ev *event) *collEvent {
	if ev.collIdx >= 0 {
		return &s.colls[ev.collIdx]
	}
	return nil
}
