package verdict

import (
	"strings"

	"github.com/nanhunt/nanhunt/internal/msprobe"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
)

// Schema names the JSON form of a Verdict. Fields may be added; none will be
// removed or change meaning without a new schema name.
const Schema = "nanhunt/verdict/v1"

// Revision counts the additions to the schema: a verdict carries the
// revision it was written with (schema_revision; absent in revision 1), and
// a reader of a later revision reads it with what it has. Revision 2 adds
// origin.timeline and scanned.path: every report is then made from the
// verdict alone. Revision 3 adds ahead: the statistics heading for their
// dtype's limit.
const Revision = 3

// Verdict is the answer: where the first NaN/Inf of the run was born, how
// sure the analysis is, and what it saw on the way.
type Verdict struct {
	Schema string `json:"schema"`
	// SchemaRevision is the Revision the verdict was written with; 0 (the
	// field is absent) in a verdict of revision 1.
	SchemaRevision int          `json:"schema_revision,omitempty"`
	Anomaly        bool         `json:"anomaly"`
	Origin         *Origin      `json:"origin"`
	FirstNaN       *OpRef       `json:"first_nan"`
	Carrier        *Hop         `json:"carrier"`
	Spread         []Hop        `json:"spread"`
	Candidates     []Candidate  `json:"candidates"`
	Recovered      []Recovered  `json:"recovered"`
	Suppressed     []Suppressed `json:"suppressed"`
	Warnings       []Warning    `json:"warnings"`
	NextSteps      []string     `json:"next_steps"`
	Scanned        Scanned      `json:"scanned"`
	// Complete is true when every expected rank-step the verdict rests on
	// was read whole (README "How it decides", 9): every dumped step when
	// there is no anomaly, the steps read up to the origin step and the
	// step that checked it otherwise. "No anomaly" with Complete false is
	// no clean bill: exit status 3.
	Complete bool `json:"complete"`
	// Unread are the expected rank-steps that could not be read whole, by
	// step and reason; empty when Complete.
	Unread []UnreadRanks `json:"unread"`
	// NotDumped are the ranks of the job that no analysed step holds (a
	// rank-subset dump, another node's folders): said, not unread.
	NotDumped []int `json:"not_dumped"`
	// MissingNodes are, in a verdict joined from node summaries, the nodes
	// that sent none (or none that could be read): their ranks were
	// expected and not read, so the verdict is not Complete.
	MissingNodes []MissingNode `json:"missing_nodes,omitempty"`
	// Steps is every dumped step of the analysed mode, in order, with
	// what each rank showed: the data of the propagation picture.
	Steps []StepState `json:"steps"`
	// Explanations say what a careful engineer would add to the origin:
	// a call that hid the value, a recompute, a level that cannot show
	// collectives, the stage of a receive, where evidence places the birth.
	Explanations []Explanation `json:"explanations,omitempty"`
	// Ahead lists the statistics heading for overflow, most urgent first
	// (revision 3): empty when none is; null when they were not looked
	// for (a verdict joined from summaries, or of an earlier revision).
	Ahead []Ahead `json:"ahead"`
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
	// Phase is the stage in four words: forward, backward, gradient
	// reduction or optimizer.
	Phase string `json:"phase"`
	Kind  string `json:"kind"` // "nan" or "inf" ("overflow" for nan_check dumps, which cannot tell)
	// Tie: several ranks made it independently, before any collective
	// connected them; they cannot be ordered.
	Tie bool `json:"tie"`
	// Captured: the op that made it is in the dump (its inputs are clean).
	Captured   bool     `json:"captured"`
	Confidence string   `json:"confidence"` // high, medium or low
	Reasons    []string `json:"reasons"`

	Chain []string `json:"chain"` // module calls around the op, outermost first (construct.json)
	Code  *Frame   `json:"code"`  // the user's line that called it (stack.json)
	Stack []Frame  `json:"stack,omitempty"`

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
	// PossibleSources are ranks of the origin step whose dump could not be
	// read (missing, empty, damaged before their first entries) or was not
	// dumped: any of them may have made it first.
	PossibleSources []int `json:"possible_sources"`
	// Timeline is the first origin rank's calls around Op, as its dump.json
	// holds them (revision 2); nil when there is no dump.json to read here
	// (a verdict joined from summaries, or of an earlier revision).
	Timeline *Timeline `json:"timeline,omitempty"`
}

// UnreadRanks are ranks of one step that were expected and could not be
// read whole, for one reason.
type UnreadRanks struct {
	Step  int   `json:"step"`
	Ranks []int `json:"ranks"`
	// Reason is "no folder" (the rank has folders at other steps, not at
	// this one), "step folder unreadable" (the step folder could not be
	// listed), "unreadable" (missing, not a file, garbage or cut before
	// its first entry, no entries) or "damaged" (broke after some entries,
	// which were used), or, in a watch, "never finished" (and, in its
	// stopped event, "not checked": interrupted first); in a verdict
	// joined from node summaries also "no summary" (a rank of a node that
	// sent none) and "not summarised" (its node's summary lists it but
	// holds no record of it: cut short, or its node stopped before it).
	Reason string `json:"reason"`
}

// MissingNode is a node of a join without a summary that could be read.
type MissingNode struct {
	Node int `json:"node"` // its index among the summarising processes; -1 unknown
	Of   int `json:"of"`   // how many there are; 0 unknown
	// Ranks are the ranks it held, when where the other nodes' ranks lie
	// tells them; empty when that cannot be told.
	Ranks []int  `json:"ranks"`
	Why   string `json:"why"` // "no summary", or "its summary could not be read"
}

// Recovered is an anomaly that the next step no longer showed: a step the
// loss scaler skipped, a dropped batch. It is not the origin of a lasting
// anomaly; Options.Strict makes it one.
type Recovered struct {
	Step  int    `json:"step"`
	Ranks []int  `json:"ranks"`
	Op    string `json:"op"`
	Stage string `json:"stage"`
	Phase string `json:"phase"`
	Kind  string `json:"kind"`
	// NextStep is the next dumped step, which no longer showed it (only
	// every n-th step may be dumped).
	NextStep int `json:"next_step"`
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
	Phase string `json:"phase"`
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
	// Path is the dump read, as it was named to the analysis (for a
	// verdict joined from summaries, the dump they were made from); absent
	// when no dump was read, and in verdicts of revision 1.
	Path Path `json:"path,omitempty"`
	// Links are the folders of what was read that are symbolic links (a
	// dump spread over several disks), the first MaxLinks by path;
	// LinksTotal counts them all. Both are absent when there is none.
	Links      []Link `json:"links,omitempty"`
	LinksTotal int    `json:"links_total,omitempty"`
}

// Link is a folder of the dump that is a symbolic link: its path as the
// dump names it, and the folder it leads to.
type Link struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// MaxLinks bounds Scanned.Links, so that a dump of many linked folders
// keeps its verdict small.
const MaxLinks = 100

// Interval brackets an uncaptured origin.
type Interval struct {
	After     *OpRef  `json:"after"` // last call with finite outputs; nil: start of the step
	AfterCode *Frame  `json:"after_code"`
	Before    OpRef   `json:"before"` // first call that shows the anomaly
	Code      *Frame  `json:"before_code"`
	Uncovered []Frame `json:"uncovered"` // user frames entered between the two calls
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
type Number = nonfinite.Number

// Frame is one line of a Python stack as msprobe records it.
type Frame struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Func   string `json:"function"`
	Source string `json:"source,omitempty"`
}

// StepState is what one dumped step showed, for the propagation picture:
// which ranks were dumped, which could not be read, and where each rank
// first met the anomaly.
type StepState struct {
	Step int `json:"step"`
	// Status is clean (every expected rank read whole, no anomaly),
	// anomaly (the step the verdict is about), recovered (an anomaly the
	// next step no longer showed), checked (read only until the anomaly
	// showed again), unread (no expected rank could be read whole),
	// incomplete (some could not, and the others hold no anomaly) or
	// not_scanned.
	Status string `json:"status"`
	// Ranks are the ranks with a folder for the step, as ranges ("0-3,8").
	Ranks   string `json:"ranks"`
	Damaged []int  `json:"damaged"` // unreadable or cut short
	// Unread are the expected ranks of the step not read whole: damaged,
	// unreadable, or without a folder for it.
	Unread    []int       `json:"unread"`
	Anomalous []RankState `json:"anomalous"` // in rank order; empty for checked steps
}

// RankState is how one rank first met the anomaly in a step.
type RankState struct {
	Rank int `json:"rank"`
	// Role is source (an origin rank: it was born here, or first seen here
	// when not captured), received (a recorded collective brought it),
	// inherited (it came in through a path the dump does not record) or
	// later (a later birth, not the origin).
	Role string `json:"role"`
	// Kind is nan, inf or overflow, as origin.kind; Values the values
	// themselves with the sign of an infinity ("+inf", "nan,-inf").
	Kind   string `json:"kind"`
	Values string `json:"values"`
	Op     string `json:"op"`
	Index  int    `json:"index"`
	Stage  string `json:"stage"`
	Phase  string `json:"phase"`
	Via    string `json:"via,omitempty"` // the collective that brought it
}

// Shown is the one value a rank's cell shows: "nan", "+inf", "-inf" or
// "overflow", from Values (or Kind, in verdicts written before Values).
func (a RankState) Shown() string {
	v := a.Values
	if v == "" {
		v = a.Kind
	}
	switch {
	case v == "overflow":
		return v
	case strings.Contains(v, "nan"):
		return "nan"
	case strings.Contains(v, "-inf") && !strings.Contains(v, "+inf"):
		return "-inf"
	case strings.Contains(v, "inf"):
		return "+inf"
	}
	return "nan"
}

// Explanation is one fact about how the value was born or travelled, in
// words and by kind, so that every report can say it.
type Explanation struct {
	// Kind is one of ExplainHidden, ExplainRecompute, ExplainNoCollectives,
	// ExplainP2PStage, ExplainBornEarlier.
	Kind string `json:"kind"`
	// Op is the call it is about ("" when about the run).
	Op   string `json:"op,omitempty"`
	Step int    `json:"step"`
	// Text is one or two sentences, ready to print.
	Text string `json:"text"`
}

// The kinds of Explanation.
const (
	// ExplainHidden: a call hid the value (a where or masked select of a
	// non-finite input), and it came back later, e.g. in the backward.
	ExplainHidden = "hidden"
	// ExplainRecompute: the origin is a forward call run again inside the
	// backward (activation checkpointing): its stage is the backward.
	ExplainRecompute = "recompute"
	// ExplainNoCollectives: the dump's level records no collectives (L0):
	// how it reached the other ranks cannot be shown, only when.
	ExplainNoCollectives = "no-collectives"
	// ExplainP2PStage: a receive takes the stage of the send it pairs with
	// (a gradient received in a pipeline's backward).
	ExplainP2PStage = "p2p-stage"
	// ExplainBornEarlier: the training log or the monitor place the birth
	// before the dump's first sight of it.
	ExplainBornEarlier = "born-earlier"
)

// Evidence is what a training log and msprobe's monitor say, next to the
// dump, and where the three agree or not.
type Evidence struct {
	Log     *LogEvidence     `json:"log,omitempty"`
	Monitor *MonitorEvidence `json:"monitor,omitempty"`
	// Agreements are claims of two sources about the same thing that
	// hold together.
	Agreements []string `json:"agreements"`
	// Contradictions are claims of two sources about the same thing (a
	// step, a phase, a rank) that cannot both hold.
	Contradictions []string `json:"contradictions"`
	// Notes are gaps in what a source covers (steps not dumped, modules
	// or phases the monitor does not record, a log that stops early),
	// each with the change that would close it: not contradictions.
	Notes []string `json:"notes"`
}

// LogEvidence is the first non-finite value a training log printed.
type LogEvidence struct {
	Files int `json:"files"`
	// FirstNaNIteration is the iteration as the log printed it;
	// FirstNaNStep the same in dump numbering (msprobe's stepN).
	FirstNaNIteration *int   `json:"first_nan_iteration"`
	FirstNaNStep      *int   `json:"first_nan_step"`
	FirstNaNMetric    string `json:"first_nan_metric"` // "loss" or "grad_norm"
	Kind              string `json:"kind"`             // nan, inf, -inf
	// Ranks printed it at that iteration (when the log tells ranks apart).
	Ranks []int `json:"ranks"`
	// LoggedRanks are all the ranks the log covers.
	LoggedRanks []int `json:"logged_ranks"`
	// StageHint: "forward" when the loss went non-finite first (or with
	// the grad norm), "backward" when the grad norm did while the loss was
	// still finite.
	StageHint string `json:"stage_hint"`
	// Mapping says how iterations become dump steps ("step = iteration - 1").
	Mapping string `json:"mapping"`
	// Skipped are iterations the loss scaler skipped: overflows that were
	// dropped, not origins.
	Skipped []SkippedIteration `json:"skipped"`
	// PersistentSkipStep is the first step of a run of skips that does not
	// end (the value stays non-finite); nil when every skip recovered.
	PersistentSkipStep *int `json:"persistent_skip_step,omitempty"`
	// NonFiniteParams is the first record that lists parameters with
	// non-finite values, when the log has such a field.
	NonFiniteParams *ParamsAfterStep `json:"nonfinite_params,omitempty"`
	// LastStep is the last step the log prints, when it prints no
	// non-finite value: it cannot show what comes later.
	LastStep *int   `json:"last_step,omitempty"`
	Where    string `json:"where"` // file:line of the first non-finite value
}

// SkippedIteration is an iteration the loss scaler skipped.
type SkippedIteration struct {
	Iteration int    `json:"iteration"`
	Step      int    `json:"step"`
	Ranks     []int  `json:"ranks"`
	Reason    string `json:"reason"`
}

// ParamsAfterStep names parameters the log found non-finite after a step.
type ParamsAfterStep struct {
	Step   int      `json:"step"`
	Params []string `json:"params"`
}

// MonitorEvidence is the earliest non-finite value msprobe's monitor
// recorded.
type MonitorEvidence struct {
	Step  *int   `json:"step"`
	Stage string `json:"stage"` // forward, backward or optimizer
	// Ranks are where it shows first: the module's rank(s) with clean
	// inputs, or the ranks whose local gradients held it.
	Ranks []int `json:"ranks"`
	// SeenOn are all ranks showing it at that step; Recorded all the
	// ranks the monitor wrote.
	SeenOn   []int  `json:"seen_on"`
	Recorded []int  `json:"recorded_ranks"`
	Module   string `json:"module"` // module or parameter name, as the monitor wrote it
	// Tensor is what held it: activation input/output, activation
	// gradient, weight gradient, optimizer state, parameter.
	Tensor string `json:"tensor"`
	// Reduction, for weight gradients: "before" (already in local
	// gradients: those ranks are sources) or "after" (only after the
	// data-parallel reduction: an aggregation fault).
	Reduction string `json:"reduction,omitempty"`
	// Partners compares tensor-parallel partners of the module.
	Partners string `json:"partners,omitempty"`
	Summary  string `json:"summary"` // one line: what, where, when
	// Weak: the monitor's first sighting is only an infinite norm (or a
	// nan statistic with no NaN counted): a tensor holding a legitimate
	// -inf, such as an attention mask, records the same.
	Weak   bool   `json:"weak,omitempty"`
	Reason string `json:"reason"` // how the monitor reader decided`
	// Findings is the monitor reader's full account.
	Findings any `json:"findings,omitempty"`
}

// Plan is what to collect next, with the msprobe config.json that does it.
type Plan struct {
	Why     string         `json:"why"`
	Collect string         `json:"collect"` // what the next dump will hold
	Config  msprobe.Config `json:"config"`
	// Register holds Python lines registering user functions for
	// collection (register_custom_api), when the dump did not cover the
	// code that made the value.
	Register string   `json:"register,omitempty"`
	Then     []string `json:"then"` // what to run once it is collected
	// Mode is "same-step" (the steps and ranks of this anomaly: for a run
	// that repeats itself) or "any-step" (every step and every rank, the
	// same narrow list: for a NaN that moves); Other says why this mode and
	// how to get the other.
	Mode  string `json:"mode,omitempty"`
	Other string `json:"other_mode,omitempty"`
	// Estimate is the size of the dump the config will write.
	Estimate *Estimate `json:"estimate,omitempty"`
	// Moves says what shows that the anomaly does not come back at the
	// same step ("" when nothing does).
	Moves string `json:"moves,omitempty"`
	// Watch is the nanhunt watch command that ends the re-run at the first
	// lasting anomaly, so that the disk holds only the steps up to it.
	Watch string `json:"watch,omitempty"`
}

// Estimate is the size of a follow-up dump, from the shapes and dtypes the
// statistics dump recorded.
type Estimate struct {
	PerRankStep int64 `json:"bytes_per_rank_step"`
	Ranks       int   `json:"ranks"`
	// Steps is how many steps it counts: one for same-step; for any-step,
	// the steps up to the one after this anomaly, where a watch ends it.
	Steps  int    `json:"steps"`
	Total  int64  `json:"bytes_total"`
	Budget int64  `json:"budget_bytes,omitempty"`
	Basis  string `json:"basis"` // what it was measured on
}
