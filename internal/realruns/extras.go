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
