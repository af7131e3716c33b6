package truth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/synth/spec"
)

// Truth is what an analysis of a generated run must find: what the dump
// shows of the simulated event. It is read off the simulation, not
// declared. The simulation records, for every entry it writes, the
// illegitimate non-finite values it held (physically: a mask's -inf and
// the garbage of a receive buffer are legitimate), the collective instance
// it took part in and the phase it ran in; the truth is what the README's
// rules (sections 5-8) make of that record, step by step, with the damage
// of the spec applied. The origin is then the first op whose inputs were
// clean and whose output was not, when the dump holds it; a fault whose
// op is not dumped, or whose step is not, is seen where the dump first
// shows it (Captured false), and a fault that leaves no trace in the
// dumped steps, or only in steps the next dumped step shows clean again,
// is no anomaly. Notes tell what the simulation itself did. When Anomaly is
// false every other field but Recovered keeps its zero value.
type Truth struct {
	// Name is the spec's name.
	Name    string `json:"name"`
	Anomaly bool   `json:"anomaly"`
	// Step is the step of Op (for an uncaptured origin, the step where the
	// anomaly is first visible in the dump).
	Step int `json:"step"`
	// Ranks are the source ranks, where the anomaly was born (for an
	// origin whose ranks could not be read, those ranks).
	Ranks []int `json:"ranks"`
	// Op is the dump.json entry name of the origin op on the source ranks;
	// when the origin is not in the dump (Captured false), the first entry
	// that shows the anomaly on the lowest of Ranks (for an unread origin,
	// on the lowest rank it reached).
	Op string `json:"op"`
	// Stage is forward, backward (including the gradient reduction) or
	// optimizer: where the simulation ran Op when the dump holds the
	// origin; for an origin it does not hold (Captured false), what the
	// README infers from the entries read: the phase of Op (README 4),
	// optimizer for weights the previous update wrote (README 6.8), with a
	// note when the simulation did otherwise. Phase keeps the four phases
	// (forward, backward, gradient reduction, optimizer).
	Stage string `json:"stage"`
	Phase string `json:"phase"`
	// Kind is "nan" or "inf": what the origin op's output first held.
	Kind string `json:"kind"`
	// Tie: more than one independent event, births on several ranks or an
	// overflowing collective in more than one instance. One overflowing
	// collective is one event seen by all its participants, not a tie.
	Tie      bool `json:"tie"`
	Captured bool `json:"captured"`
	// Unread: the origin's ranks could not be read (README 6.6): only
	// ranks that received the anomaly were.
	Unread bool `json:"unread"`
	// FirstNaN is the first entry with a NaN output on the lowest of Ranks
	// when Kind is inf, in the origin step or else in the next dumped step;
	// nil when the origin already made NaN.
	FirstNaN *OpAt `json:"first_nan"`
	// Carrier is the first collective that made ranks without the anomaly
	// non-finite (README 6.7), in the origin step or else in the next
	// dumped step; nil if none.
	Carrier *Carrier `json:"carrier"`
	// Recovered are the anomalous dumped steps before Step whose next
	// dumped step showed nothing (a float16 overflow the loss scaler
	// skipped).
	Recovered []Recovered `json:"recovered"`
	Notes     []string    `json:"notes"`
	// Ahead are the warnings due before the first non-finite value: a
	// statistic of the origin that climbed towards its dtype's limit in
	// the dumped steps before Step (see ReadAhead). Empty when none is
	// due, and in every run without an anomaly.
	Ahead []Ahead `json:"ahead"`
}

// Recovered is an anomaly that did not last to the next dumped step.
type Recovered struct {
	Step     int    `json:"step"`
	Ranks    []int  `json:"ranks"`
	Op       string `json:"op"`
	Stage    string `json:"stage"`
	Phase    string `json:"phase"`
	Kind     string `json:"kind"`
	NextStep int    `json:"next_step"`
}

// OpAt is one dump entry of one rank.
type OpAt struct {
	Step int    `json:"step"`
	Rank int    `json:"rank"`
	Op   string `json:"op"`
}

// Carrier is the collective that spread the anomaly: FromRanks sent
// non-finite data, ToRanks received it with clean data of their own. Op is
// the entry name on the first source rank.
type Carrier struct {
	Step      int    `json:"step"`
	Op        string `json:"op"`
	FromRanks []int  `json:"from_ranks"`
	ToRanks   []int  `json:"to_ranks"`
}

// RankRun is what one rank did over the whole simulation: the ops that
// created illegitimate non-finite values from clean inputs, in order, and
// the first step with a non-finite loss (-1 if none).
type RankRun struct {
	Rank    int
	Births  []Birth
	LossBad int
}

// reading is what the truth is read from: the walk over the dumped steps
// and what every rank did.
type reading struct {
	spec  *spec.Spec
	walk  *Walk
	ranks []RankRun
}

// Truth reads the Truth off the walk over the dumped steps; ranks are what
// every rank did in the whole simulation.
func (t *Walk) Truth(ranks []RankRun) *Truth {
	w := &reading{spec: t.spec, walk: t, ranks: ranks}
	return w.truth()
}

// truth reads the Truth off the walk over the dumped steps.
func (w *reading) truth() *Truth {
	t := &Truth{Name: w.spec.Name, Ranks: []int{}, Recovered: []Recovered{}, Notes: []string{}, Ahead: []Ahead{}}
	walk := w.walk
	t.Recovered = append(t.Recovered, walk.recovered...)
	for _, r := range walk.recovered {
		t.Notes = append(t.Notes, fmt.Sprintf("step %d shows %s on rank(s) %s, which the next dumped step %d no longer shows: recovered", r.Step, r.Op, rankList(r.Ranks), r.NextStep))
	}
	res := walk.origin
	if res == nil {
		t.Notes = append(t.Notes, w.cleanNotes()...)
		return t
	}
	o := &res.origin
	t.Anomaly = true
	t.Step = res.v.step
	t.Ranks = slices.Clone(o.ranks)
	t.Op = o.root.name
	t.Stage, t.Phase = o.ph.Stage(), o.ph.Name()
	t.Kind, t.Tie, t.Captured, t.Unread = o.kind, o.tie, o.captured, o.unread
	if t.Kind == "inf" {
		if e := res.v.ranks[o.main].firstNaNFrom(o.root.pos); e != nil {
			t.FirstNaN = &OpAt{Step: t.Step, Rank: o.main, Op: e.name}
		} else if c := walk.checked; c != nil {
			if e := c.v.ranks[o.main].firstNaNFrom(0); e != nil {
				t.FirstNaN = &OpAt{Step: c.v.step, Rank: o.main, Op: e.name}
			}
		}
	}
	if h, rank := res.pickCarrier(res.carriers()); h != nil {
		t.Carrier = res.carrierOf(t.Step, h, rank)
	} else if c := walk.checked; c != nil {
		var into []*vHop
		for _, h := range c.carriers() {
			if slices.ContainsFunc(h.receivers, func(rc int) bool { return res.v.ranks[rc].sign == nil }) {
				into = append(into, h)
			}
		}
		if h, rank := c.pickCarrier(into); h != nil {
			t.Carrier = c.carrierOf(c.v.step, h, rank)
		}
	}
	t.Notes = append(t.Notes, w.notes(t)...)
	return t
}

func rankList(rs []int) string {
	p := make([]string, len(rs))
	for i, r := range rs {
		p[i] = fmt.Sprint(r)
	}
	return strings.Join(p, ", ")
}
