package trace

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/nanhunt/nanhunt/dump"
)

// Schema names the JSON form of a Verdict. Fields may be added; none will be
// removed or change meaning without a new schema name.
const Schema = "nanhunt/verdict/v1"

// Verdict is the answer: where the first NaN/Inf of the run was born, how
// sure the analysis is, and what it saw on the way.
type Verdict struct {
	Schema     string       `json:"schema"`
	Anomaly    bool         `json:"anomaly"`
	Origin     *Origin      `json:"origin"`
	FirstNaN   *OpRef       `json:"first_nan"`
	Carrier    *Hop         `json:"carrier"`
	Spread     []Hop        `json:"spread"`
	Candidates []Candidate  `json:"candidates"`
	Recovered  []Recovered  `json:"recovered"`
	Suppressed []Suppressed `json:"suppressed"`
	Warnings   []Warning    `json:"warnings"`
	NextSteps  []string     `json:"next_steps"`
	Scanned    Scanned      `json:"scanned"`
	// Steps is every dumped step of the analysed mode, in order, with
	// what each rank showed: the data of the propagation picture.
	Steps []StepState `json:"steps"`
	// Evidence is what a training log and the monitor said, when given.
	Evidence *Evidence `json:"evidence,omitempty"`
	// Plan is what to collect next; nil when there is nothing to chase.
	Plan *Plan `json:"plan"`
}

// Origin is the root cause.
type Origin struct {
	Step  int    `json:"step"`
	Ranks []int  `json:"ranks"`
	Op    string `json:"op"`    // exact entry name on the origin rank(s); the first entry showing it when not captured
	Stage string `json:"stage"` // forward, backward or optimizer
	Kind  string `json:"kind"`  // "nan" or "inf" ("overflow" for nan_check dumps, which cannot tell)
	// Tie: several ranks made it independently, before any collective
	// connected them; they cannot be ordered.
	Tie bool `json:"tie"`
	// Captured: the op that made it is in the dump (its inputs are clean).
	Captured   bool     `json:"captured"`
	Confidence string   `json:"confidence"` // high, medium or low
	Reasons    []string `json:"reasons"`

	Chain []string     `json:"chain"` // module calls around the op, outermost first (construct.json)
	Code  *dump.Frame  `json:"code"`  // the user's line that called it (stack.json)
	Stack []dump.Frame `json:"stack,omitempty"`

	Inputs  []TensorStat `json:"inputs,omitempty"`
	Outputs []TensorStat `json:"outputs,omitempty"`

	// Interval brackets an origin that was not captured: the last call with
	// finite outputs before it and the first call that shows it, with the
	// user code between them that the dump does not cover.
	Interval *Interval `json:"interval,omitempty"`
	// Collective is set when the collective itself made the value from
	// clean inputs on every rank (for example a float16 sum that overflows).
	Collective bool `json:"collective,omitempty"`
	// Unread is set when only ranks that received it were read: the ranks
	// listed sent it, but their dumps are missing or damaged.
	Unread bool `json:"unread,omitempty"`
}

// Recovered is an anomaly that the next step no longer showed: a step the
// loss scaler skipped, a dropped batch. It is not the origin of a lasting
// anomaly; Options.Strict makes it one.
type Recovered struct {
	Step  int    `json:"step"`
	Ranks []int  `json:"ranks"`
	Op    string `json:"op"`
	Stage string `json:"stage"`
	Kind  string `json:"kind"`
}

// OpRef names one call.
type OpRef struct {
	Step int    `json:"step"`
	Rank int    `json:"rank"`
	Op   string `json:"op"`
}

// Hop is a collective that carried the anomaly to ranks that did not hold it.
type Hop struct {
	Step      int    `json:"step"`
	Op        string `json:"op"` // entry name on the (first) sending rank
	FromRanks []int  `json:"from_ranks"`
	ToRanks   []int  `json:"to_ranks"`
	// Unread lists participants whose side of the call was not read (not
	// dumped or damaged): the sender may be among them.
	Unread []int `json:"unread,omitempty"`
	// Inferred: the senders' side of this call was not kept (a rank keeps
	// its first 256 non-finite collectives of a step); FromRanks are the
	// participants that already held the anomaly.
	Inferred bool `json:"inferred,omitempty"`
	// Group is the process group of the call, when the dump records it.
	Group []int `json:"group"`
}

// Candidate is a call considered as an origin, with what it turned out to be.
type Candidate struct {
	Step  int    `json:"step"`
	Rank  int    `json:"rank"`
	Op    string `json:"op"`
	Index int    `json:"index"` // position in dump.json
	Stage string `json:"stage"`
	Kind  string `json:"kind"`
	Role  string `json:"role"` // origin, received, not captured, later birth, ...
}

// Suppressed is a group of calls that an exclusion changed, and why.
type Suppressed struct {
	Op     string `json:"op"`
	Reason string `json:"reason"`
	Values string `json:"values"`
	Steps  []int  `json:"steps"`
	Ranks  []int  `json:"ranks"`
	Count  int    `json:"count"`
	// Example is one entry name the exclusion applied to.
	Example string `json:"example"`
	// WouldBeOrigin: without the exclusion the call would have been an
	// origin candidate.
	WouldBeOrigin bool `json:"would_be_origin"`
}

// Warning is something the analysis could not read, or had to guess.
type Warning struct {
	File    string `json:"file,omitempty"`
	Offset  *int64 `json:"offset,omitempty"`
	Message string `json:"message"`
}

// Scanned says what was read.
type Scanned struct {
	Steps     []int `json:"steps"`
	Ranks     []int `json:"ranks"`
	Files     int   `json:"files"`
	Cleared   int   `json:"cleared"` // files the byte search cleared without parsing them
	Bytes     int64 `json:"bytes"`
	Entries   int64 `json:"entries"`         // entries walked in the other files
	StoppedAt *int  `json:"stopped_at_step"` // the step whose anomaly ended the scan
	// CheckedNext is the step after it, read only until an anomaly showed
	// that it lasts; null when that step was not dumped, or with Strict.
	CheckedNext *int   `json:"checked_next_step"`
	NotScanned  []int  `json:"not_scanned"` // steps after it, left unread
	Mode        string `json:"mode,omitempty"`
}

// Interval brackets an uncaptured origin.
type Interval struct {
	After     *OpRef       `json:"after"` // last call with finite outputs; nil: start of the step
	AfterCode *dump.Frame  `json:"after_code"`
	Before    OpRef        `json:"before"` // first call that shows the anomaly
	Code      *dump.Frame  `json:"before_code"`
	Uncovered []dump.Frame `json:"uncovered"` // user frames entered between the two calls
}

// TensorStat is one tensor of a call, for the report.
type TensorStat struct {
	Slot  string `json:"slot"` // e.g. "input_args.0", "output.1", "parameters.weight"
	Dtype string `json:"dtype,omitempty"`
	Shape []int  `json:"shape"`
	Max   Number `json:"max"`
	Min   Number `json:"min"`
	Mean  Number `json:"mean"`
	Norm  Number `json:"norm"`
	Holds string `json:"holds"` // "finite", "nan", "+inf", "-inf", "nan,-inf", ...; "unknown" without statistics
}

// Number is a statistic that may be non-finite: JSON numbers for finite
// values, the strings "nan", "inf", "-inf" otherwise, null when absent.
type Number struct {
	Value float64
	Valid bool
}

// MarshalJSON writes the number, or its non-finite spelling.
func (n Number) MarshalJSON() ([]byte, error) {
	switch {
	case !n.Valid:
		return []byte("null"), nil
	case math.IsNaN(n.Value):
		return []byte(`"nan"`), nil
	case math.IsInf(n.Value, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(n.Value, -1):
		return []byte(`"-inf"`), nil
	}
	return strconv.AppendFloat(nil, n.Value, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (n *Number) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null":
		*n = Number{}
		return nil
	case `"nan"`:
		*n = Number{math.NaN(), true}
		return nil
	case `"inf"`:
		*n = Number{math.Inf(1), true}
		return nil
	case `"-inf"`:
		*n = Number{math.Inf(-1), true}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Number{v, true}
	return nil
}

// String writes the number compactly.
func (n Number) String() string {
	switch {
	case !n.Valid:
		return "-"
	case math.IsNaN(n.Value):
		return "NaN"
	case math.IsInf(n.Value, 1):
		return "+Inf"
	case math.IsInf(n.Value, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(n.Value, 'g', 6, 64)
}
