package reference

// Verdict is the part of a verdict the rules decide; plain data, compared
// field by field by Diff.
type Verdict struct {
	Anomaly  bool
	Origin   *Origin // nil when no anomaly
	FirstNaN *OpRef
	Carrier  *Hop
	// Spread is every hop except collective origins, carrier included, in
	// canonical order: by Step, then Op, then FromRanks.
	Spread    []Hop
	Recovered []Recovered // in step order
	Steps     []Step      // every dumped step, in order
	Scanned   Scanned
	// Complete: every expected rank-step the verdict rests on was read
	// whole (README 9); Unread the others; NotDumped the job's ranks with
	// a folder in no selected step.
	Complete  bool
	Unread    []UnreadRanks
	NotDumped []int
	// Ahead: the statistics heading for overflow, most urgent first.
	Ahead []Ahead
}

// Origin is where the anomaly was born.
type Origin struct {
	Step       int
	Ranks      []int
	Op         string
	Stage      string // forward, backward or optimizer
	Phase      string // forward, backward, gradient reduction or optimizer
	Kind       string // nan, inf or overflow
	Tie        bool
	Captured   bool
	Collective bool
	Unread     bool
	Confidence string // high, medium or low
}

// OpRef names one entry of one rank at one step.
type OpRef struct {
	Step, Rank int
	Op         string
}

// Hop is one collective instance that carried the anomaly.
type Hop struct {
	Step      int
	Op        string
	FromRanks []int
	ToRanks   []int
}

// Recovered is an anomalous step that the next dumped step no longer showed.
type Recovered struct {
	Step     int
	Ranks    []int
	Op       string
	Stage    string
	Kind     string
	NextStep int
}

// Step is one dumped step and how its ranks first met the anomaly.
type Step struct {
	Step int
	// Status is clean, anomaly, recovered, checked or not_scanned.
	Status string
	// Anomalous is empty for checked and not_scanned steps.
	Anomalous []RankRole
}

// RankRole is how one rank first met the anomaly in a step.
type RankRole struct {
	Rank int
	// Role is source, received, inherited or later.
	Role  string
	Kind  string // nan, inf or overflow
	Op    string
	Stage string
	Phase string
}

// Scanned says which steps were read.
type Scanned struct {
	// Steps are the fully analysed steps before stopping, not counting the
	// checked one.
	Steps       []int
	StoppedAt   *int
	CheckedNext *int
	NotScanned  []int
}

// Options restricts the analysis.
type Options struct {
	// Steps and Ranks restrict the analysis; nil means all.
	Steps, Ranks map[int]bool
	// Strict stops at the first anomalous step without reading the next.
	Strict bool
}
