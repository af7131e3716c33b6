package trace

// syncSummary is where a rank's first sign lies among its collectives of
// one pairing base: collectives are the only clock shared by ranks.
type syncSummary struct {
	before int32 // occurrence k of the last instance before the first sign; -1 none
	after  int32 // occurrence k of the first instance at or after it; -1 none
}

// summarise reduces a rank's collectives to their place around the call
// at index first (README "How it decides", 6.2), and drops the full list.
func (s *rankScan) summarise(first int) {
	s.order = make(map[string]syncSummary, len(s.syncs))
	for base, pts := range s.syncs {
		sum := syncSummary{before: -1, after: -1}
		for _, p := range pts {
			if int(p.index) < first {
				sum.before = max(sum.before, p.k)
			} else if sum.after < 0 || p.k < sum.after {
				sum.after = p.k
			}
		}
		s.order[base] = sum
	}
}

// seenCounts keeps, for a damaged rank, how many instances of each base
// its file holds: the instances after them were not read.
func (s *rankScan) seenCounts() map[string]int32 {
	out := make(map[string]int32, len(s.syncs))
	for base, pts := range s.syncs {
		n := int32(len(pts))
		for _, p := range pts {
			n = max(n, p.k+1)
		}
		out[base] = n
	}
	return out
}

// happenedBefore reports whether rank x's first sign provably came before
// rank y's: some pairing base is shared by both, and the first instance at
// or after x's first sign comes no later than the last instance before
// y's.
func happenedBefore(x, y *rankScan) bool {
	for base, sx := range x.order {
		if sx.after < 0 {
			continue
		}
		if sy, ok := y.order[base]; ok && sy.before >= 0 && sx.after <= sy.before {
			return true
		}
	}
	return false
}
