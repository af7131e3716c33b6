package truth

// Phase is the part of a training step an op runs in.
type Phase uint8

// The phases: the forward and backward passes, the gradient
// synchronisation, the gradient clipping and the optimizer update.
const (
	PhaseForward Phase = iota
	PhaseBackward
	PhaseSync
	PhaseClip
	PhaseOptimizer
)

// Name is the verdict's Name of a phase.
func (p Phase) Name() string {
	switch p {
	case PhaseForward:
		return "forward"
	case PhaseBackward:
		return "backward"
	case PhaseSync:
		return "gradient reduction"
	}
	return "optimizer"
}

// Stage is the truth's name of a phase.
func (p Phase) Stage() string {
	switch p {
	case PhaseForward:
		return "forward"
	case PhaseBackward, PhaseSync:
		return "backward"
	}
	return "optimizer"
}

// Birth is an op that created illegitimate non-finite values from clean
// inputs.
type Birth struct {
	Step, Rank  int
	Clock       int64  // the rank's event counter at the op
	Name        string // entry name, "" when not hooked
	Key         string // identifies the op across ranks
	Captured    bool
	Stage, Kind string
}
