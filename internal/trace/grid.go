package trace

import (
	"slices"
	"sort"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/verdict"
)

// state summarises a step for the picture (verdict.StepState).
func (r *stepResult) state(status string, dirs []dump.RankDir) verdict.StepState {
	st := notScanned(r.step, dirs)
	st.Status = status
	if status == "checked" {
		// read only until one rank showed it: which one depends on timing
		return st
	}
	via := map[int]string{}
	for _, h := range r.hops {
		for _, to := range h.to {
			via[to] = h.op
		}
	}
	p := pick{}
	if r.anomalous {
		p = r.pick()
	}
	for _, rank := range r.ranks {
		s := r.scans[rank]
		if s == nil {
			continue
		}
		if s.openErr != nil || s.damage != nil || s.unread() {
			st.Damaged = append(st.Damaged, rank)
		}
		l := r.locals[rank]
		if l == nil || l.first == nil {
			continue
		}
		ev := l.first
		rs := verdict.RankState{Rank: rank}
		switch {
		case slices.Contains(r.sources, rank), p.collective && slices.Contains(p.ranks, rank):
			rs.Role = "source"
			if l.root != nil {
				ev = l.root
			}
		case slices.Contains(r.later, rank):
			rs.Role = "later"
			if l.root != nil {
				ev = l.root
			}
		case l.role == roleReceived:
			rs.Role, rs.Via = "received", via[rank]
		default:
			rs.Role = "inherited"
		}
		rs.Kind = kindName(l.kind, l.role == roleFlagged)
		rs.Values = l.kind.String()
		if l.role == roleFlagged {
			rs.Values = "overflow"
		}
		rs.Op, rs.Index, rs.Stage, rs.Phase = ev.name, ev.index, ev.phase.Stage(), ev.phase.String()
		st.Anomalous = append(st.Anomalous, rs)
	}
	st.Damaged = slices.Compact(st.Damaged)
	st.Unread = unreadRanksOf(r.unread)
	if st.Unread == nil {
		st.Unread = []int{}
	}
	return st
}

// notScanned is the state of a step left unread: only which ranks have
// a folder.
func notScanned(step int, dirs []dump.RankDir) verdict.StepState {
	ranks := make([]int, 0, len(dirs))
	for _, d := range dirs {
		ranks = append(ranks, d.Rank)
	}
	sort.Ints(ranks)
	return verdict.StepState{Step: step, Status: "not_scanned", Ranks: notation.FormatRanges(ranks), Damaged: []int{}, Unread: []int{}, Anomalous: []verdict.RankState{}}
}
