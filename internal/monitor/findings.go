package monitor

// Schema names the layout of Findings; it changes when a field changes
// meaning.
const Schema = "nanhunt/monitor/v1"

// Stages, as in Findings.Stage and Origin.Stage.
const (
	StageForward   = "forward"
	StageBackward  = "backward"
	StageOptimizer = "optimizer"
)

// Findings is what the monitor output says about where NaN/Inf first
// appeared. It is plain data: every path is relative to Run.Root, every
// statistic is the text the monitor wrote ("nan", "inf", "1.25").
type Findings struct {
	Schema string `json:"schema"`
	// Generation is "v1" (TrainerMon), "v2" (monitor_v2) or "v1+v2".
	Generation string `json:"generation"`
	// HeaderStyles lists the CSV header styles met: StyleV1, StyleV1Old,
	// StyleV2.
	HeaderStyles []string `json:"header_styles"`
	Ranks        []int    `json:"ranks"`
	Folders      int      `json:"folders"`
	FilesRead    int      `json:"files_read"`
	RowsRead     int64    `json:"rows_read"`
	// AnomalousRows counts tensor rows with a NaN or Inf (weak ones too).
	AnomalousRows int64 `json:"anomalous_rows"`
	// PlaceholderRows counts the rows the monitor fills with nan for a
	// non-tensor input or output; they are not anomalies.
	PlaceholderRows int64 `json:"placeholder_rows"`
	// Recorded says, per kind, which steps were monitored and what was
	// found.
	Recorded []KindSummary `json:"recorded"`

	// Found is true when any row shows a NaN or Inf.
	Found bool `json:"found"`
	// Stage and Step are those of Origin; Step is -1 when nothing was
	// found.
	Stage  string  `json:"stage,omitempty"`
	Step   int     `json:"step"`
	Origin *Origin `json:"origin,omitempty"`

	Forward   *Activations `json:"forward,omitempty"`
	Backward  *Activations `json:"backward,omitempty"`
	Gradients *Gradients   `json:"gradients,omitempty"`
	Optimizer *Optimizer   `json:"optimizer,omitempty"`

	// Warnings lists the first 50 warnings of the read; WarningCount
	// counts them all.
	Warnings     []Warning `json:"warnings,omitempty"`
	WarningCount int       `json:"warning_count"`
}

// KindSummary is what was read of one kind of record.
type KindSummary struct {
	Kind string `json:"kind"`
	// Steps are the steps recorded on any rank, like "0-9,12".
	Steps         string `json:"steps"`
	Ranks         []int  `json:"ranks"`
	Records       int64  `json:"records"`
	AnomalousRows int64  `json:"anomalous_rows"`
	// FirstStep is the first step with a (strong) anomaly, -1 if none.
	FirstStep int `json:"first_step"`
}

// Origin is the earliest evidence, ordered like msprobe's anomaly analyser:
// by step, micro-step, stage (forward before backward before optimizer),
// virtual pipeline stage and call order.
type Origin struct {
	Stage string `json:"stage"`
	// Step is the training step the evidence belongs to. For optimizer
	// state and param_origin rows it is the step whose optimizer.step wrote
	// them, one before the step they were recorded at.
	Step int `json:"step"`
	// Source is the section the evidence comes from: "forward",
	// "backward", "gradients" or "optimizer".
	Source string `json:"source"`
	Row    Row    `json:"row"`
	// Ranks are the ranks the evidence names: the origin rank, or the
	// source ranks of a gradient.
	Ranks  []int  `json:"ranks"`
	Reason string `json:"reason"`
	// Weak is true when the only evidence is weak (see Row.Weak).
	Weak bool `json:"weak,omitempty"`
}

// Row is one tensor's statistics as the monitor wrote them.
type Row struct {
	// Source is the kind of record (a Kind* name).
	Source string `json:"source"`
	Rank   int    `json:"rank"`
	Step   int    `json:"step"`
	// MicroStep and VppStage are -1 when the file does not record them.
	MicroStep int `json:"micro_step"`
	VppStage  int `json:"vpp_stage"`
	// Name is the module (activations) or parameter name, without the
	// tensor suffix.
	Name string `json:"name"`
	// Tensor is the tensor of the module call: "input", "output_1"
	// (TrainerMon), "input.0", "grad_input.0" (monitor_v2), "output_grad"
	// (old header); "" for parameters.
	Tensor string `json:"tensor,omitempty"`
	// Side is "in" for a tensor going into the computation of its pass and
	// "out" for one it produced: in the backward pass the gradient of a
	// module's output is "in" and the gradient of its input "out".
	Side string `json:"side,omitempty"`
	// Call is the position of this module call (or parameter) among those
	// of the same kind, step and rank in its file, from 0. The monitor
	// writes no call counter: a module called twice in one micro-step keeps
	// one row per tensor.
	Call int `json:"call"`
	// Kind is "nan", "+inf", "-inf" or "inf" (both signs, or only the
	// unsigned norm); "" for a clean row.
	Kind string `json:"kind,omitempty"`
	// Weak is true when the row is only suspicious: an infinite norm with
	// finite (or unrecorded) min and max, which a finite tensor shows when
	// its norm overflows, or a nan statistic while the nans count is 0.
	Weak bool `json:"weak,omitempty"`
	// Values are the statistics as written: min, max, mean, norm, nans,
	// shape, dtype (those recorded).
	Values map[string]string `json:"values"`
	File   string            `json:"file"`
	Line   int               `json:"line"`
}

// Born values of Activations.Born and RankFirst.Born.
const (
	// BornHere: the row is a module's output and the inputs of the same
	// call were recorded clean: the NaN/Inf was born in that module.
	BornHere = "here"
	// BornInputsAnomalous: the inputs were already anomalous (or the row
	// is an input): it came from earlier.
	BornInputsAnomalous = "inputs_anomalous"
	// BornInputsNotRecorded: an output whose call has no recorded input.
	BornInputsNotRecorded = "inputs_not_recorded"
	// BornUnknown: the tensor name does not say input or output.
	BornUnknown = "unknown"
)

// Activations is the first step with an anomalous module input or output
// in one pass (actv forward, actv_grad backward).
type Activations struct {
	Source string `json:"source"`
	Step   int    `json:"step"`
	// Weak is true when only weak rows were found for this kind.
	Weak bool `json:"weak,omitempty"`
	// EarlierWeakStep is set when weak rows appear before Step.
	EarlierWeakStep *int `json:"earlier_weak_step,omitempty"`
	// First is the first anomalous row of the origin rank (Origin.Rank).
	First      Row    `json:"first"`
	OriginRank int    `json:"origin_rank"`
	Born       string `json:"born"`
	// PerRank is every rank's first anomalous row at Step.
	PerRank          []RankFirst `json:"per_rank"`
	RanksAnomalous   []int       `json:"ranks_anomalous"`
	RanksClean       []int       `json:"ranks_clean"`
	RanksNotRecorded []int       `json:"ranks_not_recorded,omitempty"`
	Partners         *Partners   `json:"partners,omitempty"`
	Reason           string      `json:"reason"`
}

// RankFirst is one rank's first anomalous row at a step.
type RankFirst struct {
	Rank          int    `json:"rank"`
	AnomalousRows int64  `json:"anomalous_rows"`
	Born          string `json:"born,omitempty"`
	First         Row    `json:"first"`
}

// Partner verdicts.
const (
	// PartnersShared: every compared rank shows the anomaly in the same
	// tensor: a collective inside the module (or data shared by the group)
	// carried it.
	PartnersShared = "shared"
	// PartnersLocal: only the origin rank shows it: that rank's own compute.
	PartnersLocal = "local"
	// PartnersPartial: some partners show it, some do not.
	PartnersPartial = "partial"
	// PartnersNone: no other rank recorded the tensor at that step.
	PartnersNone = "no_partners"
)

// Partners compares the origin tensor (same module, tensor, micro-step and
// virtual stage at the same step) across the ranks that recorded it.
type Partners struct {
	// GroupsKnown is true when Options.Groups gave the origin rank's
	// tensor-parallel group; otherwise every rank that recorded the tensor
	// is compared.
	GroupsKnown bool  `json:"groups_known"`
	Group       []int `json:"group,omitempty"`
	Compared    []int `json:"compared"`
	Anomalous   []int `json:"anomalous"`
	Clean       []int `json:"clean"`
	// Missing are group members that did not record the tensor.
	Missing []int `json:"missing,omitempty"`
	// SameKind is true when every anomalous partner shows the origin's kind.
	SameKind bool   `json:"same_kind"`
	Verdict  string `json:"verdict"`
	Reason   string `json:"reason"`
}

// Where values of Gradients.Where.
const (
	// GradBeforeReduction: a local (unreduced) gradient was anomalous: the
	// ranks holding it are the source.
	GradBeforeReduction = "before_reduction"
	// GradAfterReduction: only reduced gradients were anomalous while every
	// rank's unreduced gradients were recorded clean: the aggregation
	// (communication) produced it.
	GradAfterReduction = "after_reduction"
	// GradAfterReductionUnverified: only reduced gradients were anomalous,
	// and unreduced gradients were not recorded on every such rank.
	GradAfterReductionUnverified = "after_reduction_unverified"
)

// Gradients is the first step with an anomalous weight gradient.
type Gradients struct {
	Step   int       `json:"step"`
	Where  string    `json:"where"`
	Weak   bool      `json:"weak,omitempty"`
	Before *GradSide `json:"before"`
	After  *GradSide `json:"after"`
	Reason string    `json:"reason"`
}

// GradSide is one side of the data-parallel reduction at Gradients.Step.
type GradSide struct {
	Source   string `json:"source"`
	Recorded bool   `json:"recorded"`
	// RanksAnomalous are the ranks with an anomalous gradient on this
	// side; before the reduction they are the source ranks.
	RanksAnomalous   []int `json:"ranks_anomalous"`
	RanksClean       []int `json:"ranks_clean"`
	RanksNotRecorded []int `json:"ranks_not_recorded,omitempty"`
	AnomalousRows    int64 `json:"anomalous_rows"`
	// First is the first anomalous parameter in row order, FirstRanks the
	// ranks where that parameter is anomalous at the step.
	First      *Row  `json:"first,omitempty"`
	FirstRanks []int `json:"first_ranks,omitempty"`
}

// Optimizer verdicts.
const (
	// OptimizerFault: the optimizer step turned clean gradients into
	// non-finite state or weights.
	OptimizerFault = "optimizer"
	// OptimizerFromGradients: the gradients of that step were already
	// anomalous.
	OptimizerFromGradients = "from_gradients"
	// OptimizerGradientsNotRecorded: no gradient was recorded at that step.
	OptimizerGradientsNotRecorded = "gradients_not_recorded"
	// OptimizerBetweenSteps: the weights entered a step anomalous although
	// the previous step's updated weights were recorded clean: they changed
	// outside optimizer.step.
	OptimizerBetweenSteps = "between_steps"
)

// Optimizer is the first anomaly in optimizer state or weights.
//
// TrainerMon records exp_avg and exp_avg_sq in a hook that runs before
// optimizer.step, so the state recorded at step s is the one written by
// the optimizer step of s-1 (or loaded, when s-1 was not run); param_origin
// at s are the weights as step s began, param_updated at s those after its
// optimizer.step.
type Optimizer struct {
	// Step is the optimizer step that produced the first anomalous state
	// or weights.
	Step    int      `json:"step"`
	Verdict string   `json:"verdict"`
	State   *OptSide `json:"state,omitempty"`
	Updated *OptSide `json:"updated,omitempty"`
	Origin  *OptSide `json:"origin,omitempty"`
	// GradientsRecorded and GradientsClean describe the gradients of Step
	// on every rank that recorded them.
	GradientsRecorded bool   `json:"gradients_recorded"`
	GradientsClean    bool   `json:"gradients_clean"`
	Weak              bool   `json:"weak,omitempty"`
	Reason            string `json:"reason"`
}

// OptSide is the first anomalous row of one optimizer record group.
type OptSide struct {
	Source       string `json:"source"`
	RecordedStep int    `json:"recorded_step"`
	// WrittenByStep is the step whose optimizer.step produced the rows.
	WrittenByStep  int   `json:"written_by_step"`
	RanksAnomalous []int `json:"ranks_anomalous"`
	First          Row   `json:"first"`
	Weak           bool  `json:"weak,omitempty"`
}

// Warning is something odd met while reading: a damaged line, an unknown
// column, a missing file.
type Warning struct {
	File    string `json:"file"`           // relative to Run.Root, slash separated
	Line    int    `json:"line,omitempty"` // 1-based; 0 when about the whole file
	Message string `json:"message"`
}
