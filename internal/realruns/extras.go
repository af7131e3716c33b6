package realruns

// Extras are the truth fields of the scenarios that need more than the
// origin and its carrier to be explained; each is absent (nil) elsewhere.
// testdata/realruns/README.md ("The truth files") describes them.
type Extras struct {
	// Hidden: a NaN that an op hid in the forward and that came back
	// later in the same step on the same rank.
	Hidden *Hidden `json:"hidden,omitempty"`
	// LossFinite is true when the training log's loss stayed finite on
	// every rank and step although the dumps hold NaN.
	LossFinite bool `json:"loss_finite,omitempty"`
	// Monitor is what the TrainerMon output kept beside the dumps
	// (<scenario>/monitor/) shows.
	Monitor *MonitorTruth `json:"monitor,omitempty"`
	// Checkpoint describes an activation-checkpointed block.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// CollectivesRecorded is false when the dump level records no
	// collective (L0); nil when it does.
	CollectivesRecorded *bool `json:"collectives_recorded,omitempty"`
	// HiddenCarrier is the spread between ranks that the dump cannot show.
	HiddenCarrier *HiddenCarrier `json:"hidden_carrier,omitempty"`
	// P2P lists every send and recv of the origin step with what it
	// carried.
	P2P *P2P `json:"p2p,omitempty"`
	// UndumpedBirth is where the value was born when that step was not
	// dumped, as the training log shows it.
	UndumpedBirth *UndumpedBirth `json:"undumped_birth,omitempty"`
	// Ahead is the statistic that climbs towards its dtype's limit before
	// the first non-finite value (null in a clean run, which has
	// CleanTraps instead).
	Ahead *AheadTruth `json:"ahead"`
	// MonitorClimb is the TrainerMon row that climbs with it.
	MonitorClimb *MonitorClimb `json:"monitor_climb,omitempty"`
	// CleanTraps are the entries of a clean run that look alarming and must
	// not raise a warning.
	CleanTraps []CleanTrap `json:"clean_traps,omitempty"`
	// LogLossScale is the static loss scale the training log records.
	LogLossScale float64 `json:"log_loss_scale,omitempty"`
}

// AheadTruth is a statistic of one call that climbs towards the limit of
// the dtype it is stored in: Op's Tensor slot ("input_args.0",
// "output.0"), its Stat ("max" or "min"), the Limit (65504, or
// ln(65504) for the input of an exp whose result is stored in float16 by
// StoredBy), the ranks whose value crosses it at FirstNonfiniteStep, and
// the Series on Ranks[0] ("<step>" -> value) for every dumped step before
// it. The value rises at least 5 % a step over the 4 steps before
// FirstNonfiniteStep; WarnByStep (= FirstNonfiniteStep - 2) is the step a
// warning is due by.
type AheadTruth struct {
	Op                 string             `json:"op"`
	Tensor             string             `json:"tensor"`
	Stat               string             `json:"stat"`
	Dtype              string             `json:"dtype"`
	Limit              float64            `json:"limit"`
	Ranks              []int              `json:"ranks"`
	FirstNonfiniteStep int                `json:"first_nonfinite_step"`
	WarnByStep         int                `json:"warn_by_step"`
	StoredBy           string             `json:"stored_by,omitempty"`
	Series             map[string]float64 `json:"series"`
}

// MonitorClimb is one TrainerMon row (file kind, module or parameter name)
// of one rank and its Stat per step before the first non-finite step.
type MonitorClimb struct {
	File   string             `json:"file"`
	Name   string             `json:"name"`
	Rank   int                `json:"rank"`
	Stat   string             `json:"stat"`
	Series map[string]float64 `json:"series"`
}

// CleanTrap is one alarming-looking value of a clean run: Trap names it
// ("mask", "bias", "fp16-max-fill", "flat-large", "spike"), Op and Tensor
// where it is, Stat and Value what it holds on every step and rank (-Inf
// when NegInf; a spike only at Step on Rank; flat-large within 1 % above
// Value).
type CleanTrap struct {
	Trap   string   `json:"trap"`
	Op     string   `json:"op"`
	Tensor string   `json:"tensor"`
	Stat   string   `json:"stat"`
	Value  *float64 `json:"value,omitempty"`
	NegInf bool     `json:"neg_inf,omitempty"`
	Dtype  string   `json:"dtype"`
	Step   *int     `json:"step,omitempty"`
	Rank   *int     `json:"rank,omitempty"`
}

// UndumpedBirth is a birth in a step the dump skipped: its step, ranks and
// phase, and the training log's first NaN loss (step and ranks).
type UndumpedBirth struct {
	Step            int    `json:"step"`
	Ranks           []int  `json:"ranks"`
	Phase           string `json:"phase"`
	LogLossNaNStep  int    `json:"log_loss_nan_step"`
	LogLossNaNRanks []int  `json:"log_loss_nan_ranks"`
}

// Hidden is a NaN hidden by the op By and seen again at Reappears.
type Hidden struct {
	Step           int    `json:"step"`
	Rank           int    `json:"rank"`
	By             string `json:"by"`
	Reappears      string `json:"reappears"`
	ReappearsStage string `json:"reappears_stage"`
	ReappearsKind  string `json:"reappears_kind"`
}

// MonitorTruth names the first anomalous monitor rows.
type MonitorTruth struct {
	// Folder is the monitor output's folder inside the scenario folder.
	Folder string `json:"folder"`
	// First is the first anomalous row (its step, the ranks that have it).
	First MonitorRow `json:"first"`
	// Reduced is the first anomalous row after the gradient reduction.
	Reduced MonitorRow `json:"reduced"`
	// ActvFiniteSteps are the steps whose activation rows are all finite.
	ActvFiniteSteps []int `json:"actv_finite_steps"`
	// BoolRows are the activation rows of torch.bool tensors.
	BoolRows []string `json:"bool_rows"`
}

// MonitorRow is a row of one monitor file (actv, grad_unreduced, ...).
type MonitorRow struct {
	Step  int    `json:"step"`
	Ranks []int  `json:"ranks"`
	File  string `json:"file"`
	Name  string `json:"name"`
}

// Checkpoint is a block run under torch.utils.checkpoint.
type Checkpoint struct {
	UseReentrant bool `json:"use_reentrant"`
	// OriginForward is the forward entry whose backward is the origin.
	OriginForward            string `json:"origin_forward"`
	OriginForwardIsRecompute bool   `json:"origin_forward_is_recompute"`
	// RecomputeFrame is the stack frame that marks a recompute.
	RecomputeFrame string `json:"recompute_frame"`
	// FirstForward are the block's API entries of the first forward.
	FirstForward []string `json:"first_forward"`
	// FirstForwardHasBackward is false when only the recompute's entries
	// get backward entries (use_reentrant=True).
	FirstForwardHasBackward bool `json:"first_forward_has_backward"`
	// Recompute maps a level to its recompute entries, in dump order; they
	// are the same in every step and on every rank.
	Recompute map[string][]string `json:"recompute"`
}

// HiddenCarrier is how the anomaly reached other ranks without a recorded
// collective, and where they first show it.
type HiddenCarrier struct {
	Step      int    `json:"step"`
	FromRanks []int  `json:"from_ranks"`
	ToRanks   []int  `json:"to_ranks"`
	Via       string `json:"via"`
	Seen      struct {
		Step  int    `json:"step"`
		Op    string `json:"op"`
		Field string `json:"field"`
	} `json:"seen"`
}

// P2P is every point-to-point call of one step.
type P2P struct {
	Step  int       `json:"step"`
	Calls []P2PCall `json:"calls"`
}

// P2PCall is one send or recv: what it carried ("activation" or
// "gradient"), so its stage ("forward" or "backward"), and whether the
// dump shows a non-finite value in it.
type P2PCall struct {
	Rank      int    `json:"rank"`
	Op        string `json:"op"`
	Peer      int    `json:"peer"`
	Carries   string `json:"carries"`
	Stage     string `json:"stage"`
	Nonfinite bool   `json:"nonfinite"`
}
