package trace

// The join keeps, of each record, only what finds it again when its step
// is analysed: its rank and the length of its line (8 bytes), in runs of
// records of one step that follow each other in one summary (summarize
// writes a step's records together, so a node's step is one run). A step's
// places are made from its runs when it is read, and dropped after: the
// join holds one step's records at a time, as a read of the folders does,
// and what it keeps of the others is a few bytes each. Which rank-steps are
// held is two bits each, by step (a map only for ranks past denseRanks).

// stepKey names one step of one execution mode.
type stepKey struct {
	mode string
	step int
}

// recSlot is one record of a run: its rank and the length of its line.
type recSlot struct {
	rank int32
	size int32
}

// recRun is records of one step that follow each other in one summary:
// the first starts at offset, each next one where the one before ends.
type recRun struct {
	file     int32
	detailed bool // its summary was made with details
	offset   int64
	end      int64 // where the last ends
	slots    []recSlot
}

// stepRecords are the records of one step: where they lie, and which
// ranks are held (held), by a summary made with details (detailed).
type stepRecords struct {
	runs           []recRun
	held, detailed rankBits
}

// denseRanks bounds the ranks a step's bits hold in a slice (16 KiB a
// set); a rank past it (a folder number, not a job's rank) is kept in a map.
const denseRanks = 1 << 17

// rankBits is a set of ranks.
type rankBits struct {
	words []uint64
	far   map[int]bool
}

func (b *rankBits) has(rank int) bool {
	if rank >= denseRanks {
		return b.far[rank]
	}
	w := rank / 64
	return w < len(b.words) && b.words[w]&(1<<(rank%64)) != 0
}

func (b *rankBits) add(rank int) {
	if rank >= denseRanks {
		if b.far == nil {
			b.far = map[int]bool{}
		}
		b.far[rank] = true
		return
	}
	w := rank / 64
	for len(b.words) <= w {
		b.words = append(b.words, 0)
	}
	b.words[w] |= 1 << (rank % 64)
}

// recIndex is where the records of a join lie, by step.
type recIndex map[stepKey]*stepRecords

// holds reports whether a record of the rank-step was kept, and whether
// one made with details was.
func (ix recIndex) holds(k recordKey) (held, detailed bool) {
	sr := ix[stepKey{k.mode, k.step}]
	if sr == nil {
		return false, false
	}
	return sr.held.has(k.rank), sr.detailed.has(k.rank)
}

// add notes the record of a rank-step at a place.
func (ix recIndex) add(k recordKey, p recPlace) {
	sk := stepKey{k.mode, k.step}
	sr := ix[sk]
	if sr == nil {
		sr = &stepRecords{}
		ix[sk] = sr
	}
	sr.held.add(k.rank)
	if p.detailed {
		sr.detailed.add(k.rank)
	}
	slot := recSlot{rank: int32(k.rank), size: p.size}
	if n := len(sr.runs); n > 0 {
		last := &sr.runs[n-1]
		if last.file == p.file && last.detailed == p.detailed && last.end == p.offset {
			last.slots = append(last.slots, slot)
			last.end += int64(p.size)
			return
		}
	}
	sr.runs = append(sr.runs, recRun{file: p.file, detailed: p.detailed, offset: p.offset, end: p.offset + int64(p.size), slots: []recSlot{slot}})
}

// fileOf is the summary the record of a rank-step kept comes from (-1:
// none), made with details or not: for the message that refuses the same
// rank-step twice.
func (ix recIndex) fileOf(k recordKey, detailed bool) int32 {
	for p := range ix.each(stepKey{k.mode, k.step}) {
		if int(p.rank) == k.rank && p.detailed == detailed {
			return p.file
		}
	}
	return -1
}

// slotPlace is a record's place with its rank.
type slotPlace struct {
	recPlace
	rank int32
}

// each yields the places of a step's records, in the order the summaries
// were read.
func (ix recIndex) each(sk stepKey) func(func(slotPlace) bool) {
	return func(yield func(slotPlace) bool) {
		sr := ix[sk]
		if sr == nil {
			return
		}
		for _, run := range sr.runs {
			at := run.offset
			for _, s := range run.slots {
				if !yield(slotPlace{recPlace{offset: at, file: run.file, size: s.size, detailed: run.detailed}, s.rank}) {
					return
				}
				at += int64(s.size)
			}
		}
	}
}

// places are where the records of one step lie, by rank: a record made
// with details stands for one made without (the second phase for the
// first), as the records were kept.
func (ix recIndex) places(sk stepKey) map[int]recPlace {
	sr := ix[sk]
	if sr == nil {
		return nil
	}
	n := 0
	for _, run := range sr.runs {
		n += len(run.slots)
	}
	out := make(map[int]recPlace, n)
	for p := range ix.each(sk) {
		if had, ok := out[int(p.rank)]; ok && had.detailed && !p.detailed {
			continue
		}
		out[int(p.rank)] = p.recPlace
	}
	return out
}

// all yields the place of every record kept, by rank-step.
func (ix recIndex) all() func(func(recordKey, recPlace) bool) {
	return func(yield func(recordKey, recPlace) bool) {
		for sk := range ix {
			for rank, p := range ix.places(sk) {
				if !yield(recordKey{sk.mode, sk.step, rank}, p) {
					return
				}
			}
		}
	}
}
