package trace

import (
	"sort"

	"github.com/nanhunt/nanhunt/dump"
)

// StepState is what one dumped step showed, for the propagation picture:
// which ranks were dumped, which could not be read, and where each rank
// first met the anomaly.
type StepState struct {
	Step int `json:"step"`
	// Status is clean, anomaly (the step the verdict is about), recovered
	// (an anomaly the next step no longer showed), checked (read only
	// until the anomaly showed again) or not_scanned.
	Status string `json:"status"`
	// Ranks are the ranks with a folder for the step, as ranges ("0-3,8").
	Ranks     string      `json:"ranks"`
	Damaged   []int       `json:"damaged"`   // unreadable or cut short
	Anomalous []RankState `json:"anomalous"` // in rank order; empty for checked steps
}

// RankState is how one rank first met the anomaly in a step.
type RankState struct {
	Rank int `json:"rank"`
	// Role is source (it was born here, or first seen here when not
	// captured), received (a recorded collective brought it), inherited
	// (it came in through a path the dump does not record), flagged
	// (nan_check) or seen.
	Role  string `json:"role"`
	Kind  string `json:"kind"` // nan, +inf, -inf or overflow
	Op    string `json:"op"`
	Index int    `json:"index"`
	Stage string `json:"stage"`
	Via   string `json:"via,omitempty"` // the collective that brought it
}

// state summarises a step for the picture.
func (r *stepResult) state(status string, dirs []dump.RankDir) StepState {
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
	isIn := func(list []int, rank int) bool {
		for _, x := range list {
			if x == rank {
				return true
			}
		}
		return false
	}
	for _, rank := range r.ranks {
		s := r.scans[rank]
		if s == nil {
			continue
		}
		if s.openErr != nil || s.damage != nil {
			st.Damaged = append(st.Damaged, rank)
		}
		l := r.locals[rank]
		if l == nil || l.first == nil {
			continue
		}
		ev := l.first
		rs := RankState{Rank: rank}
		switch {
		case l.role == roleFlagged:
			rs.Role = "flagged"
		case isIn(r.sources, rank):
			rs.Role = "source"
			if l.root != nil {
				ev = l.root
			}
		case isIn(r.unrecorded, rank):
			rs.Role = "inherited"
		case l.role == roleReceived:
			rs.Role, rs.Via = "received", via[rank]
		default:
			rs.Role = "seen"
		}
		rs.Kind = signedKind(l.kind, ev.flagged)
		rs.Op, rs.Index, rs.Stage = ev.name, ev.index, s.stage(ev)
		st.Anomalous = append(st.Anomalous, rs)
	}
	return st
}

// signedKind names a class with the sign of its infinity.
func signedKind(c dump.Class, flagged bool) string {
	switch {
	case flagged:
		return "overflow"
	case c&dump.NaN != 0:
		return "nan"
	case c&dump.PosInf != 0:
		return "+inf"
	case c&dump.NegInf != 0:
		return "-inf"
	}
	return "nan"
}

// notScanned is the state of a step left unread: only which ranks have
// a folder.
func notScanned(step int, dirs []dump.RankDir) StepState {
	ranks := make([]int, 0, len(dirs))
	for _, d := range dirs {
		ranks = append(ranks, d.Rank)
	}
	sort.Ints(ranks)
	return StepState{Step: step, Status: "not_scanned", Ranks: dump.FormatRanges(ranks), Damaged: []int{}, Anomalous: []RankState{}}
}
