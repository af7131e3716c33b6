package reference

import (
	"slices"
	"sort"
)

// hop is one collective instance that is the first sign of the ranks that
// received a severe value through it (README 6.1).
type hop struct {
	inst instKey
	// receivers had their first sign in it; senders' sides of it sent a
	// severe value; unseen participants could not show their side.
	receivers, senders, unseen []int
	// madeHere: no participant sent and every one was seen (6.5).
	madeHere bool
}

// arrival is one receive side of a receiver's first sign.
type arrival struct {
	rank int
	side *collSide
}

// collectHops gathers the receive sides of every received first sign by
// instance. Hops keep the order in which they are first met: receivers in
// rank order, each one's sides in the order its entry lists them.
func collectHops(d *stepData, signs map[int]*sign) []*hop {
	var arrivals []arrival
	for rank := range signs {
		s := signs[rank]
		if s.role != signReceived {
			continue
		}
		for _, side := range s.first.coll.sides {
			if side.recv != 0 {
				arrivals = append(arrivals, arrival{rank, side})
			}
		}
	}
	sort.SliceStable(arrivals, func(i, j int) bool { return arrivals[i].rank < arrivals[j].rank })

	var hops []*hop
	where := map[instKey]int{}
	firstSide := map[instKey]*collSide{}
	for _, a := range arrivals {
		key := a.side.inst()
		at, seen := where[key]
		if !seen {
			at = len(hops)
			where[key] = at
			firstSide[key] = a.side
			hops = append(hops, &hop{inst: key})
		}
		if h := hops[at]; !slices.Contains(h.receivers, a.rank) {
			h.receivers = append(h.receivers, a.rank)
		}
	}
	for _, h := range hops {
		for _, p := range participantsOf(d, firstSide[h.inst]) {
			switch sideOf(d, p, h.inst) {
			case sideUnseen:
				h.unseen = append(h.unseen, p)
			case sideSent:
				h.senders = append(h.senders, p)
			}
		}
		sort.Ints(h.receivers)
	}
	return hops
}

// What one participant's dump shows of an instance.
type sideShown uint8

const (
	sideQuiet  sideShown = iota // read: absent, or present without a severe send
	sideSent                    // read, and its side sent a severe value
	sideUnseen                  // unread, or damaged before its side
)

func sideOf(d *stepData, rank int, key instKey) sideShown {
	rd := d.read(rank)
	if rd == nil {
		return sideUnseen
	}
	ref, present := rd.instances[key]
	if !present {
		if rd.status == fileDamaged {
			return sideUnseen
		}
		return sideQuiet
	}
	if ref.side.send != 0 {
		return sideSent
	}
	return sideQuiet
}

// participantsOf an instance (README 3, "the participants"), ascending: the
// two peers of a message; the group's listed ranks; every rank of the job
// (dumped or not) for the default group, for entry-name pairing and for a
// message whose peer the dump does not name; the ranks that recorded the
// instance for a group known by id or name only.
func participantsOf(d *stepData, side *collSide) []int {
	job := func() []int {
		all := append(append([]int{}, d.dumped...), d.notDumped...)
		sort.Ints(all)
		return all
	}
	c := side.clock
	if c.kind == keyP2P {
		if c.from < 0 || c.to < 0 {
			return job()
		}
		pair := []int{min(c.from, c.to), max(c.from, c.to)}
		return slices.Compact(pair)
	}
	if c.kind == keyName || side.group.mode == groupDefault {
		return job()
	}
	if listed := side.group.ranks; listed != nil {
		out := append([]int{}, listed...)
		sort.Ints(out)
		return slices.Compact(out)
	}
	var recorded []int
	key := side.inst()
	for _, rank := range d.dumped {
		if rd := d.read(rank); rd != nil && rd.instances[key].e != nil {
			recorded = append(recorded, rank)
		}
	}
	return recorded
}

// creditUnseenSources: a source whose side of a hop without a sender was
// not read counts as that hop's sender (README 6.7, from_ranks).
func creditUnseenSources(hops []*hop, sources []int) {
	isSource := func(rank int) bool { return slices.Contains(sources, rank) }
	for _, h := range hops {
		if len(h.senders) == 0 {
			h.senders = keepInts(h.unseen, isSource)
		}
	}
}

// keepInts is the members of xs that keep accepts, in order (nil for none).
func keepInts(xs []int, keep func(int) bool) []int {
	var out []int
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}
