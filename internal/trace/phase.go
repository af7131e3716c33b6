package trace

import (
	"github.com/nanhunt/nanhunt/internal/safeio"
	"github.com/nanhunt/nanhunt/internal/sidefile"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// region is where a call lies relative to the step's backward entries.
type region uint8

const (
	beforeBackward  region = iota // before the first backward entry
	backwardEntry                 // a backward entry itself
	betweenBackward               // a forward-named call between the first and last backward entries
	afterBackward                 // after the last backward entry
	noBackward                    // the file has no backward entry
)

func (s *rankScan) region(ev *event) region {
	switch {
	case ev.dir == notation.Backward || ev.dir == notation.ParamGrad:
		return backwardEntry
	case s.lastBwd < 0:
		return noBackward
	case ev.index < s.firstBwd:
		return beforeBackward
	case ev.index < s.lastBwd, s.damage != nil:
		// in a file cut short, what follows the last backward entry read
		// may be a later micro-batch's forward: nothing is after B₂
		return betweenBackward
	}
	return afterBackward
}

// sideWarnings are what could not be read of a rank's side files while
// placing its calls in phases.
type sideWarnings struct {
	stack, construct error
}

// phases places the given calls of a rank in the step's phases (README
// "How it decides", 4): by their names and positions, and, where those do
// not tell, by what construct.json and stack.json say of them.
func (sc *scanner) phases(s *rankScan, evs []*event) {
	needTail := false
	for _, ev := range evs {
		if r := s.region(ev); r == noBackward || r == afterBackward {
			needTail = true
		}
	}
	// a long tail (a forward-only file's is every call) is not named: the
	// side files are asked for the calls they place in the optimizer
	byName := needTail && !s.tailCut && len(s.tail) <= s.lim.tailByName
	n := len(evs)
	if byName {
		n += len(s.tail)
	}
	// sized once for what it will hold: the tail may be long, and a map
	// sized for a tail it does not hold makes every look-up a cache miss
	need := make(map[string]bool, n)
	for _, ev := range evs {
		switch s.region(ev) {
		case backwardEntry:
			ev.phase = policy.Backward
		case beforeBackward:
			ev.phase = policy.Forward
		case betweenBackward:
			need[ev.name] = true
		case noBackward:
			need[ev.name] = true
			needTail = true
		case afterBackward:
			needTail = true
		}
	}
	if byName {
		for _, t := range s.tail {
			need[t.name] = true
		}
	}
	optimizer := needTail && !byName
	if len(need) == 0 && !optimizer {
		return
	}
	tags := sc.readTags(s, need, optimizer)
	optStart := -1
	if needTail {
		optStart = sc.optimizerStart(s, tags)
	}
	sc.opsBefore(s, evs)
	for _, ev := range evs {
		switch s.region(ev) {
		case betweenBackward:
			ev.phase = s.betweenPhase(ev, tags)
		case afterBackward:
			ev.phase = policy.Reduction
			if ev.index >= optStart {
				ev.phase = policy.Optimizer
			}
		case noBackward:
			fr := tags.frames[ev.name]
			switch {
			case optStart >= 0 && ev.index >= optStart:
				ev.phase = policy.Optimizer
			case fr.Backward || ev.recompute: // a recompute runs inside the backward
				ev.phase = policy.Backward
			default:
				ev.phase = policy.Forward
			}
		}
	}
}

// betweenPhase is the phase of a forward-named call between the step's
// first and last backward entries: backward when construct.json or its stack
// say a backward called it (a recompute of activation checkpointing too, or
// msprobe marked it one), forward when its stack shows a checkpointed
// forward that no backward called or its op ran before the first backward
// entry too (a later micro-batch), and backward otherwise (a kernel only
// the backward calls).
func (s *rankScan) betweenPhase(ev *event, tags *sideTags) policy.Phase {
	fr := tags.frames[ev.name]
	if ph, ok := policy.ParentPhase(tags.parents[ev.name]); ok && ph == policy.Backward {
		return policy.Backward
	}
	switch {
	case fr.Backward, ev.recompute:
		return policy.Backward
	case fr.Checkpoint:
		return policy.Forward
	}
	if s.preOps[dump.ParseName(ev.name).Op()] { // (complete for the calls asked about: opsBefore)
		return policy.Forward
	}
	return policy.Backward
}

// sideTags is what a rank's construct.json and stack.json say of some
// calls.
type sideTags struct {
	parents map[string]string
	frames  map[string]policy.Frames
}

// placesAnyInOptimizer reports whether the side files place any call they
// were asked about in the optimizer: when none, no entry of the tail is
// one, and its names need not be read again to say so.
func (t *sideTags) placesAnyInOptimizer() bool {
	for _, parent := range t.parents {
		if ph, ok := policy.ParentPhase(parent); ok && ph == policy.Optimizer {
			return true
		}
	}
	for _, fr := range t.frames {
		if fr.Optimizer {
			return true
		}
	}
	return false
}

func (t *sideTags) optimizer(name string) bool {
	if ph, ok := policy.ParentPhase(t.parents[name]); ok && ph == policy.Optimizer {
		return true
	}
	return t.frames[name].Optimizer
}

// optimizerStart is the index where the optimizer starts among the entries
// after the last backward entry (README "How it decides", 4.2): the first
// that the side files place in it, else the first that is not a collective
// after the last collective after the last backward entry; -1 in a file
// without backward entries whose side files place none.
func (sc *scanner) optimizerStart(s *rankScan, tags *sideTags) int {
	start := -1
	if tags.placesAnyInOptimizer() {
		sc.eachTail(s, func(name string, index int) bool {
			if tags.optimizer(name) {
				start = index
			}
			return start < 0
		})
	}
	if start < 0 && s.lastBwd >= 0 {
		start = max(s.lastBwd, s.lastColl) + 1
	}
	return start
}

// readTags reads the parents and stacks of the wanted calls, streaming,
// and, when optimizer is set, of every call they place in the optimizer.
func (sc *scanner) readTags(s *rankScan, want map[string]bool, optimizer bool) *sideTags {
	t := &sideTags{parents: map[string]string{}}
	var parentRule func(string) bool // nil: the wanted calls only
	var stackRule func([]sidefile.Frame) bool
	if optimizer {
		parentRule, stackRule = policy.OptimizerParent, policy.OptimizerStack
	}
	rd := s.dir
	if rd.Construct != "" {
		if f, err := safeio.Open(rd.Construct); err == nil {
			t.parents, err = sidefile.ReadParentsWhere(f, want, parentRule)
			f.Close()
			s.sides.construct = err
		} else {
			s.sides.construct = err
		}
	}
	if rd.Stack != "" {
		if f, err := safeio.Open(rd.Stack); err == nil {
			stacks, err := sidefile.ReadStacksWhere(f, want, stackRule)
			f.Close()
			s.sides.stack = err
			t.frames = make(map[string]policy.Frames, len(stacks))
			// names that share one stack (stack.json v2) share its frames:
			// read each stack once
			read := map[*sidefile.Frame]policy.Frames{}
			for name, frames := range stacks {
				if len(frames) == 0 {
					t.frames[name] = policy.ReadFrames(frames)
					continue
				}
				fr, ok := read[&frames[0]]
				if !ok {
					fr = policy.ReadFrames(frames)
					read[&frames[0]] = fr
				}
				t.frames[name] = fr
			}
		} else {
			s.sides.stack = err
		}
	}
	return t
}
