package reference

import (
	"slices"
	"sort"
)

// nameOrigin is README 6.5, 6.6 and 6.8: who the origin is, its main rank
// and what its root says.
func nameOrigin(res *stepResult) *stepOrigin {
	o := &stepOrigin{main: -1}
	made := 0 // hops that are collective origins
	if len(res.sources) > 0 {
		o.ranks = append([]int{}, res.sources...)
	} else {
		// 6.5: a hop with no sender and nobody unseen made the value.
		receivers := map[int]bool{}
		for _, h := range res.hops {
			h.madeHere = len(h.senders)+len(h.unseen) == 0
			if h.madeHere {
				made++
				markAll(receivers, h.receivers)
			}
		}
		o.collective = made > 0
		if !o.collective {
			// 6.6: only receivers were read; the origin is the unseen
			// participants of the hops that no one was seen to send in.
			o.unread = true
			for _, h := range res.hops {
				if len(h.senders) == 0 {
					markAll(receivers, h.unseen)
				}
			}
		}
		o.ranks = sortedInts(receivers)
	}
	o.main = mainRank(res, o.ranks)
	s := res.signs[o.main]
	if s == nil {
		return o
	}
	o.root, o.kind, o.phase = s.root, s.kind, s.root.phase
	o.tie = len(res.sources) > 1 || made > 1
	o.captured = o.collective || isBirth(s)
	if !o.captured && writtenByLastUpdate(res, s.root) {
		o.weights = true
		o.phase = phaseOptimizer
	}
	return o
}

func markAll(set map[int]bool, ranks []int) {
	for _, r := range ranks {
		set[r] = true
	}
}

// mainRank is the lowest origin rank with a birth, else the lowest one
// that was read, else the lowest receiver of the hops without a sender (of
// any hop when every hop has one; of any rank with a sign, without hops).
func mainRank(res *stepResult, ranks []int) int {
	hasSign := func(r int) bool { return res.signs[r] != nil }
	withBirth := func(r int) bool { return hasSign(r) && isBirth(res.signs[r]) }
	for _, want := range []func(int) bool{withBirth, hasSign} {
		if i := slices.IndexFunc(ranks, want); i >= 0 {
			return ranks[i]
		}
	}
	var senderless, received []int
	for _, h := range res.hops {
		received = append(received, h.receivers...)
		if len(h.senders) == 0 {
			senderless = append(senderless, h.receivers...)
		}
	}
	for _, pool := range [][]int{senderless, received, res.signRanks()} {
		if len(pool) > 0 {
			return slices.Min(pool)
		}
	}
	return -1
}

// writtenByLastUpdate is README 6.8 for an origin that is not captured:
// every non-finite input of the main root is under a module's
// `parameters`, or two sources or more have their root at one forward
// entry (by name) whose non-finite inputs all require grad.
func writtenByLastUpdate(res *stepResult, root *entry) bool {
	underParams := func(v value) bool { return v.field == "parameters" }
	if root.coll == nil && everyNonFinite(root, underParams) {
		return true
	}
	needsGrad := func(v value) bool { return v.requiresGrad }
	seen := map[string]bool{}
	for _, rank := range res.sources {
		e := res.signs[rank].root
		if e.coll != nil || e.phase != phaseForward || !everyNonFinite(e, needsGrad) {
			continue
		}
		if seen[e.name] {
			return true
		}
		seen[e.name] = true
	}
	return false
}

// everyNonFinite: the entry has a non-finite input and ok holds for each.
func everyNonFinite(e *entry, ok func(value) bool) bool {
	found := false
	for _, v := range e.inputs {
		if v.holds == 0 {
			continue
		}
		if !ok(v) {
			return false
		}
		found = true
	}
	return found
}

// rowRoles is the role of every rank with a first sign in the step's rows:
// an origin rank is a source; a late birth a later one; a receiver that is
// not an origin rank received; every other rank inherited.
func rowRoles(res *stepResult) map[int]string {
	roles := make(map[int]string, len(res.signs))
	origin := append([]int{}, res.origin.ranks...)
	sort.Ints(origin)
	for rank, s := range res.signs {
		role := roleInherited
		if _, isOrigin := slices.BinarySearch(origin, rank); isOrigin {
			role = roleSource
		} else if res.late[rank] && isBirth(s) {
			role = roleLater
		} else if s.role == signReceived {
			role = roleReceived
		}
		roles[rank] = role
	}
	return roles
}
