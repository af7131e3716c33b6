package reference

import "sort"

// clockReading is where a rank's first sign falls on one pairing key's
// instances: the counter of the first instance at or after it and of the
// last one before it.
type clockReading struct {
	after, before       int
	hasAfter, hasBefore bool
}

// readClocks reads every pairing key of a rank at the entry index at.
func readClocks(rd *rankData, at int) map[clockKey]clockReading {
	out := make(map[clockKey]clockReading, len(rd.clocks))
	for key, refs := range rd.clocks {
		var c clockReading
		for _, ref := range refs {
			if ref.e.index < at {
				c.before, c.hasBefore = ref.k, true
			} else if !c.hasAfter {
				c.after, c.hasAfter = ref.k, true
			}
		}
		out[key] = c
	}
	return out
}

// precedes is README 6.2: x's first sign happened before y's when a key
// both ranks have puts x's next instance no later than y's previous one.
func precedes(x, y map[clockKey]clockReading) bool {
	for key, cx := range x {
		cy, shared := y[key]
		if shared && cx.hasAfter && cy.hasBefore && cx.after <= cy.before {
			return true
		}
	}
	return false
}

// isBirth: the root was made on the rank (a birth, a promoted -inf) or
// flagged by nan_check, which counts as a birth.
func isBirth(s *sign) bool { return s.rootRole == signBirth || s.rootRole == signFlagged }

// orderCandidates is README 6.3 and 6.4. The candidates are every rank
// whose first sign did not arrive through a recorded collective; one is
// late when another candidate's first sign happened before its own. The
// sources are the births that are not late, or, without any, every
// candidate that is not late.
func orderCandidates(d *stepData, signs map[int]*sign) (map[int]bool, []int) {
	readings := map[int]map[clockKey]clockReading{}
	for rank, s := range signs {
		if s.rootRole != signReceived {
			readings[rank] = readClocks(d.read(rank), s.first.index)
		}
	}
	late := map[int]bool{}
	for c, rc := range readings {
		for o, ro := range readings {
			if o != c && precedes(ro, rc) {
				late[c] = true
				break
			}
		}
	}
	var births, onTime []int
	for rank := range readings {
		if late[rank] {
			continue
		}
		onTime = append(onTime, rank)
		if isBirth(signs[rank]) {
			births = append(births, rank)
		}
	}
	sources := onTime
	if len(births) > 0 {
		sources = births
	}
	sort.Ints(sources)
	return late, sources
}
