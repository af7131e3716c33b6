package reference

import "strings"

// The four phases and the three stages (README section 4).
const (
	phaseForward   = "forward"
	phaseBackward  = "backward"
	phaseReduction = "gradient reduction"
	phaseOptimizer = "optimizer"
)

// stageOf is the phase in three words.
func stageOf(phase string) string {
	if phase == phaseReduction {
		return phaseBackward
	}
	return phase
}

// isBackwardModule tells a Module….backward.N name.
func isBackwardModule(name string) bool {
	segs := strings.Split(name, ".")
	n := len(segs)
	return n >= 3 && isModulePrefix(segs[0]) && segs[n-2] == "backward" && isDigits(segs[n-1])
}

// phaseByConstruct is rule 2: the entry's parent in construct.json.
func phaseByConstruct(parent string) string {
	switch {
	case parent == "optimizer" || parent == "clip_grad":
		return phaseOptimizer
	case isBackwardModule(parent):
		return phaseBackward
	}
	return ""
}

// stackSays is what an entry's own stack says (README section 4): a frame
// in torch/utils/checkpoint, optimizer code, a function named backward.
type stackSays struct{ checkpoint, optimizer, backward bool }

func readStack(frames []frame) stackSays {
	var s stackSays
	for _, f := range frames {
		if strings.Contains(f.file, "torch/utils/checkpoint") {
			s.checkpoint = true
		}
		if isOptimizerFrame(f) {
			s.optimizer = true
		}
		if f.fn == "backward" {
			s.backward = true
		}
	}
	return s
}

// isOptimizerFrame: a file under a folder named optim, optimizer or
// optimizers, a function whose name starts with clip_grad, or a line of
// code that calls .step(.
func isOptimizerFrame(f frame) bool {
	dirs := strings.Split(strings.ReplaceAll(f.file, "\\", "/"), "/")
	if len(dirs) > 0 {
		dirs = dirs[:len(dirs)-1]
	}
	for _, d := range dirs {
		if d == "optim" || d == "optimizer" || d == "optimizers" {
			return true
		}
	}
	return strings.HasPrefix(f.fn, "clip_grad") || strings.Contains(f.code, ".step(")
}

// assignPhases gives every entry of a rank's step its phase (rules 1-5).
func assignPhases(entries []*entry, construct map[string]string, stacks map[string][]frame, whole bool) {
	b1, b2 := -1, -1
	for i, e := range entries {
		if e.backward {
			if b1 < 0 {
				b1 = i
			}
			b2 = i
		}
	}
	if !whole && b2 >= 0 {
		b2 = len(entries) // README 4: in a damaged file B2 is the end of what was read
	}
	inOptimizer := func(e *entry) bool {
		return phaseByConstruct(construct[e.name]) == phaseOptimizer || readStack(stacks[e.name]).optimizer
	}
	// where the optimizer starts: after B2 (rule 2), or anywhere without a
	// backward entry (rule 3)
	optStart := len(entries)
	for i := b2 + 1; i < len(entries); i++ {
		if inOptimizer(entries[i]) {
			optStart = i
			break
		}
	}
	if optStart == len(entries) && b2 >= 0 {
		lastColl := -1
		for i := b2 + 1; i < len(entries); i++ {
			if entries[i].collective {
				lastColl = i
			}
		}
		if lastColl < 0 {
			optStart = b2 + 1
		} else {
			for i := lastColl + 1; i < len(entries); i++ {
				if !entries[i].collective {
					optStart = i
					break
				}
			}
		}
	}
	before := map[string]bool{}
	if b1 >= 0 {
		for _, e := range entries[:b1] {
			before[e.op] = true
		}
	}
	for i, e := range entries {
		e.afterB2 = b2 >= 0 && i > b2
		switch {
		case e.backward: // rule 1
			e.phase = phaseBackward
		case b2 >= 0 && i > b2: // rule 2
			e.phase = phaseReduction
			if i >= optStart {
				e.phase = phaseOptimizer
			}
		case b1 < 0: // rule 3
			st := readStack(stacks[e.name])
			switch {
			case i >= optStart:
				e.phase = phaseOptimizer
			case st.backward || e.recompute:
				e.phase = phaseBackward
			default:
				e.phase = phaseForward
			}
		case i < b1: // rule 4
			e.phase = phaseForward
		default: // rule 5: between B1 and B2
			st := readStack(stacks[e.name])
			switch {
			case phaseByConstruct(construct[e.name]) == phaseBackward, st.backward, e.recompute:
				e.phase = phaseBackward
			case st.checkpoint, before[e.op]:
				e.phase = phaseForward
			default:
				e.phase = phaseBackward
			}
		}
	}
}
