package truth

import "github.com/nanhunt/nanhunt/internal/synth/spec"

// RankStep is what one rank wrote at a dumped step: the record of its
// dump.json (nil when none was kept) and the size of the file.
type RankStep struct {
	Rank      int
	Log       *Log
	DumpBytes int64
}

// NewWalk starts the walk over the dumped steps of the run s describes
// (normalized).
func NewWalk(s *spec.Spec) *Walk {
	return &Walk{spec: s, cuts: map[[2]int]int64{}}
}

// Done tells that the walk has found what it needs: later steps need no
// record.
func (t *Walk) Done() bool { return t.done }

// Cuts are the truncation offsets of the damaged dump.json files, by step
// and rank, as the walk measured them.
func (t *Walk) Cuts() map[[2]int]int64 { return t.cuts }

// See builds the view of a dumped step from what every rank wrote and
// walks it; last tells the last dumped step.
func (t *Walk) See(step int, last bool, ranks []RankStep) {
	if t.done {
		return
	}
	v := &stepView{step: step}
	for _, rs := range ranks {
		cut, unread := t.cutOf(step, rs)
		placeable, stack := t.placeable(step, rs.Rank)
		v.ranks = append(v.ranks, newRankView(rs.Rank, rs.Log, cut, unread, placeable, stack))
	}
	t.step(v, last)
}

// cutOf is where the spec's damage cuts a rank's dump.json at a step (-1:
// not cut), measured on the file just written; unread tells a file that
// cannot be read at all. It is called once per dumped step.
func (t *Walk) cutOf(step int, rs RankStep) (cut int64, unread bool) {
	cut = -1
	for _, d := range t.spec.Damage {
		if d.Step != step || d.Rank != rs.Rank {
			continue
		}
		switch d.Kind {
		case "":
		case "dup-data":
			// damage after the entries of the first data member
			cut = rs.DumpBytes
		default:
			unread = true
		}
		if d.TruncateAt > 0 {
			size := rs.DumpBytes
			from := int64(0)
			if d.AfterOrigin {
				from = rs.Log.firstTaintEnd()
			}
			cut = from + int64(d.TruncateAt*float64(size-from))
			t.cuts[[2]int{step, rs.Rank}] = cut
		}
	}
	return cut, unread
}

// placeable reports whether a rank's stack.json or construct.json can
// place an entry in the optimizer, and whether its stack.json is there
// (the damage may remove them).
func (t *Walk) placeable(step, rank int) (placeable, stack bool) {
	stack, construct := true, t.spec.Level == "mix"
	for _, d := range t.spec.Damage {
		if d.Step == step && d.Rank == rank {
			stack = stack && !d.DropStack
			construct = construct && !d.DropConstruct
		}
	}
	return stack || construct, stack
}
