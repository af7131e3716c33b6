package trainlog

import (
	"slices"
	"sort"
)

const (
	// defaultKeepFinite is Options.KeepFinite when it is 0.
	defaultKeepFinite = 10000
	// maxKeptOther bounds the records per file that are kept because they
	// are not plainly finite.
	maxKeptOther = 100000
)

// pending is the last record of one rank, held back so that the next line
// can complete it (a value printed on a line of its own) or describe the
// same overflow.
type pending struct {
	rec       Record
	nanIters  int  // "number of nan iterations", -1 if not printed
	mergeable bool // a value line that a later value line may complete
	overflow  bool // from a DeepSpeed overflow line
	approx    bool // a skip whose iteration may be wrong
	// scaleFrom is the loss scale an overflow line says was attempted
	// (Absent when it says none): the scale held before the overflow
	scaleFrom Value
	// trained: the rank is known to have applied a step before this one
	// (a DeepSpeed progress line counted more steps than skipped ones)
	trained bool
}

// sink receives the records of one file for one family of line formats,
// keeps some and accounts for all.
type sink struct {
	path       string
	keepFinite int
	ahead      AheadJudge

	recs       []Record
	keptFinite int
	keptOther  int
	n          int // records
	dropped    int

	ranks   map[int]*rankAgg
	pending map[int]*pending
	// skipped holds the iterations some rank of the file skipped (at most
	// maxSkipsPerRank): the loss scaler skips a step on every rank.
	skipped map[int]bool
}

func newSink(path string, keepFinite int, ahead AheadJudge) *sink {
	return &sink{path: path, keepFinite: keepFinite, ahead: ahead, ranks: map[int]*rankAgg{}, pending: map[int]*pending{}}
}

// add takes a record. A mergeable record (a value line) completes the
// pending record of its rank when that one is mergeable too, is at the same
// iteration and lacks the values this one has.
func (s *sink) add(n pending) {
	r := n.rec
	if r.Skipped {
		s.markSkipped(r.Iteration)
	}
	p := s.pending[r.Rank]
	if p != nil && n.mergeable && p.mergeable && p.rec.Iteration == r.Iteration &&
		(r.Loss.Kind == Absent || p.rec.Loss.Kind == Absent) &&
		(r.GradNorm.Kind == Absent || p.rec.GradNorm.Kind == Absent) {
		if r.Loss.Kind != Absent {
			p.rec.Loss = r.Loss
		}
		if r.GradNorm.Kind != Absent {
			p.rec.GradNorm = r.GradNorm
		}
		return
	}
	if p != nil {
		s.flush(p)
		*p = n
		return
	}
	np := new(pending)
	*np = n
	s.pending[r.Rank] = np
}

// markSkipped notes an iteration that a rank skipped.
func (s *sink) markSkipped(it int) {
	if s.skipped == nil {
		s.skipped = map[int]bool{}
	}
	if len(s.skipped) < maxSkipsPerRank {
		s.skipped[it] = true
	}
}

// flush accounts for a record and keeps it if there is room. A non-finite
// record at an iteration another rank's line says was skipped (an HF
// Trainer printing the inf grad norm of an overflowed step) is a skip too.
func (s *sink) flush(p *pending) {
	r := &p.rec
	if !r.Skipped && s.skipped[r.Iteration] && (r.Loss.NonFinite() || r.GradNorm.NonFinite()) {
		r.Skipped = true
		r.Note = "non-finite values at an iteration the loss scaler skipped"
	}
	s.n++
	a := s.ranks[r.Rank]
	if a == nil {
		a = newRankAgg(r.Rank, s.path)
		a.judge = s.ahead
		s.ranks[r.Rank] = a
	}
	a.add(p)
	if r.finiteOnly() {
		if s.keptFinite >= s.keepFinite {
			s.dropped++
			return
		}
		s.keptFinite++
	} else {
		if s.keptOther >= maxKeptOther {
			s.dropped++
			return
		}
		s.keptOther++
	}
	s.recs = append(s.recs, *r)
}

// finish flushes every pending record and sorts the kept ones by line.
func (s *sink) finish() {
	ranks := make([]int, 0, len(s.pending))
	for r := range s.pending {
		ranks = append(ranks, r)
	}
	slices.Sort(ranks)
	for _, r := range ranks {
		s.flush(s.pending[r])
	}
	s.pending = map[int]*pending{}
	sort.SliceStable(s.recs, func(i, j int) bool { return s.recs[i].Line < s.recs[j].Line })
}

// relabel gives the records of rank -1 the file's rank, once it is known.
func (s *sink) relabel(rank int) {
	if rank < 0 {
		return
	}
	for i := range s.recs {
		if s.recs[i].Rank < 0 {
			s.recs[i].Rank = rank
		}
	}
	a := s.ranks[-1]
	if a == nil {
		return
	}
	delete(s.ranks, -1)
	a.rank = rank
	if b := s.ranks[rank]; b != nil {
		b.merge(a)
		return
	}
	s.ranks[rank] = a
}

// setOffset fills in the steps of the kept records.
func (s *sink) setOffset(off int) {
	for i := range s.recs {
		s.recs[i].Step = s.recs[i].Iteration + off
	}
	for _, a := range s.ranks {
		a.offset = off
		a.shiftClimbs(off)
	}
}

// rankList returns the ranks the records name, sorted, without -1.
func (s *sink) rankList() []int {
	var rs []int
	for r := range s.ranks {
		if r >= 0 {
			rs = append(rs, r)
		}
	}
	slices.Sort(rs)
	return rs
}
