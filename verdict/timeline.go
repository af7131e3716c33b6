package verdict

// Timeline is one origin rank's calls around the root op, in execution
// order, as its dump.json of the origin step holds them: the last calls
// with finite outputs before it, the root op, the calls that carried an Inf
// until it became NaN, and the first collective after it (revision 2).
type Timeline struct {
	Rank int  `json:"rank"` // origin.ranks[0]
	File Path `json:"file"` // the dump.json read; "" when there is none
	// Calls are the calls read, in file order; empty when Unread is set.
	Calls []TimelineCall `json:"calls"`
	// Unread says why the calls could not be read (no dump.json of the
	// rank at that step, an entry of the root op's name missing from it);
	// a report then shows the verdict's own record of the root op.
	Unread string `json:"unread,omitempty"`
	// Warnings say what the reading met: damage after some calls, no
	// collective among the calls read after the root op, phases that
	// could not be placed.
	Warnings []string `json:"warnings,omitempty"`
}

// TimelineCall is one call of a Timeline.
type TimelineCall struct {
	Index int    `json:"index"` // position in dump.json, from 0
	Op    string `json:"op"`
	// Role is clean (finite outputs), root (the op the origin names),
	// chain (it held the Inf before the NaN), first_nan, collective (the
	// first after the root op) or carrier (that collective is the one
	// that carried it to other ranks).
	Role string `json:"role"`
	// Phase is the phase it ran in: forward, backward, gradient reduction
	// or optimizer; "" when it could not be placed.
	Phase string `json:"phase"`
	// Holds is what its outputs hold: finite, nan, +inf, "nan,-inf", ...;
	// "" when it has no outputs.
	Holds string `json:"holds"`
	// Inputs and Outputs are its tensors, at most MaxTimelineTensors a
	// side; More counts those left out.
	Inputs  []TensorStat `json:"inputs"`
	Outputs []TensorStat `json:"outputs"`
	More    int          `json:"more,omitempty"`
}

// MaxTimelineTensors bounds the tensors a TimelineCall lists per side.
const MaxTimelineTensors = 8
