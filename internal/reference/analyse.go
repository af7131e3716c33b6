package reference

import (
	"errors"
	"fmt"
	"slices"
	"sort"
)

// Analyse applies the rules of the README to the dump at path (a dump_path,
// a step folder, a rank folder or a dump.json), reading every file whole.
func Analyse(path string, opt Options) (*Verdict, error) {
	all, err := discover(path)
	if err != nil {
		return nil, err
	}
	steps := selectDirs(all, opt)
	if !anyRank(steps) {
		return nil, errors.New("reference: no rank folder matches the requested steps and ranks")
	}
	a := &analysis{steps: steps, known: map[int]bool{}, selected: opt.Ranks, never: map[int]bool{}, status: map[int]string{}, rows: map[int][]RankRole{}}
	for _, s := range steps {
		for _, r := range s.ranks {
			a.known[r.rank] = true
		}
	}
	a.scan(opt.Strict)
	v := a.verdict()
	v.Ahead = a.ahead(v)
	return v, nil
}

// ahead judges the statistics heading for overflow at the last dumped
// step before the origin's (the last dumped step without one).
func (a *analysis) ahead(v *Verdict) []Ahead {
	step, found := 0, false
	files := map[int]map[int]string{}
	for _, s := range a.steps {
		if v.Origin != nil && s.step >= v.Origin.Step {
			continue
		}
		for _, r := range s.ranks {
			if r.dump == "" {
				continue
			}
			if files[r.rank] == nil {
				files[r.rank] = map[int]string{}
			}
			files[r.rank][s.step] = r.dump
			if !found || s.step > step {
				step, found = s.step, true
			}
		}
	}
	if !found {
		return []Ahead{}
	}
	return aheadOf(step, files)
}

// load reads a step and names its ranks that were not dumped.
func (a *analysis) load(sd stepDir) *stepData {
	d := loadStep(sd)
	d.notDumped = a.notDumped(d)
	return d
}

// analysis is the walk over the steps (README section 7).
type analysis struct {
	steps    []stepDir
	known    map[int]bool // ranks with a folder in some step
	selected map[int]bool // the ranks option (nil: all)
	status   map[int]string
	rows     map[int][]RankRole

	unread    []UnreadRanks // expected rank-steps not read whole, of the steps read
	never     map[int]bool  // ranks of the job with a folder in no selected step
	checkedAt *int          // the next dumped step read to see whether the anomaly lasts
	undecided bool          // it showed nothing but was not read whole

	scanned   []int
	recovered []Recovered
	origin    *stepResult // the origin step
	checked   *stepResult // the next dumped step, read to see it lasts
	stoppedAt int         // index in steps of the origin step
}

func (a *analysis) scan(strict bool) {
	a.stoppedAt = -1
	for i := 0; i < len(a.steps); i++ {
		d := a.load(a.steps[i])
		res := analyseStep(d)
		step := a.steps[i].step
		a.scanned = append(a.scanned, step)
		unread := a.account(d)
		if !res.anomalous() {
			a.status[step] = statusWithout(unread, d)
			continue
		}
		a.rows[step] = rowsOf(res)
		if strict || i+1 == len(a.steps) {
			a.origin, a.stoppedAt = res, i
			a.status[step] = "anomaly"
			return
		}
		nd := a.load(a.steps[i+1])
		next := analyseStep(nd)
		nextStep := nd.step
		if next.anomalous() {
			a.origin, a.checked, a.checkedAt, a.stoppedAt = res, next, &nextStep, i
			a.status[step] = "anomaly"
			a.status[nextStep] = "checked"
			return
		}
		if nu := a.account(nd); len(nu) > 0 {
			// README 9: whether it lasted cannot be told
			a.origin, a.checkedAt, a.stoppedAt, a.undecided = res, &nextStep, i, true
			a.status[step] = "anomaly"
			a.status[nextStep] = statusWithout(nu, nd)
			return
		}
		a.status[step] = "recovered"
		o := a.originOf(res, i)
		a.recovered = append(a.recovered, Recovered{Step: step, Ranks: o.Ranks, Op: o.Op, Stage: o.Stage, Kind: o.Kind, NextStep: next.data.step})
		// the next step showed nothing: it is clean, and the scan goes on after it
		i++
		a.scanned = append(a.scanned, next.data.step)
		a.status[next.data.step] = "clean"
	}
}

// account adds a step's unread rank-steps and never-dumped ranks to the
// verdict's, and returns the step's.
func (a *analysis) account(d *stepData) []UnreadRanks {
	unread := a.unreadOf(d)
	a.unread = append(a.unread, unread...)
	for _, r := range a.neverDumped(d) {
		a.never[r] = true
	}
	return unread
}

// rowsOf lists how each rank first met the anomaly, in rank order.
func rowsOf(res *stepResult) []RankRole {
	var out []RankRole
	for _, rank := range res.signRanks() {
		s := res.signs[rank]
		out = append(out, RankRole{Rank: rank, Role: res.roles[rank], Kind: s.kind, Op: s.root.name,
			Stage: stageOf(s.root.phase), Phase: s.root.phase})
	}
	return out
}

// originOf is the verdict's origin for a step's analysis.
func (a *analysis) originOf(res *stepResult, i int) *Origin {
	o := res.origin
	out := &Origin{Step: res.data.step, Ranks: slices.Clone(o.ranks), Kind: o.kind, Phase: o.phase, Stage: stageOf(o.phase),
		Tie: o.tie, Captured: o.captured, Collective: o.collective, Unread: o.unread}
	if out.Ranks == nil {
		out.Ranks = []int{}
	}
	if o.root != nil {
		out.Op = o.root.name
	}
	out.Confidence = a.confidence(res, i == 0)
	return out
}

func (a *analysis) verdict() *Verdict {
	v := &Verdict{Recovered: a.recovered, Scanned: Scanned{Steps: a.scanned, NotScanned: []int{}}, Spread: []Hop{}}
	if v.Recovered == nil {
		v.Recovered = []Recovered{}
	}
	if v.Scanned.Steps == nil {
		v.Scanned.Steps = []int{}
	}
	for _, s := range a.steps {
		st, ok := a.status[s.step]
		if !ok {
			st = "not_scanned"
			v.Scanned.NotScanned = append(v.Scanned.NotScanned, s.step)
		}
		rows := []RankRole{}
		if st == "anomaly" || st == "recovered" {
			rows = a.rows[s.step]
		}
		v.Steps = append(v.Steps, Step{Step: s.step, Status: st, Anomalous: rows})
	}
	v.Complete, v.Unread, v.NotDumped = len(a.unread) == 0, a.unread, sortedInts(a.never)
	if v.Unread == nil {
		v.Unread = []UnreadRanks{}
	}
	if a.origin == nil {
		return v
	}
	res := a.origin
	v.Anomaly = true
	v.Origin = a.originOf(res, a.stoppedAt)
	step := res.data.step
	v.Scanned.StoppedAt = &step
	v.Scanned.CheckedNext = a.checkedAt
	main := res.origin.main
	if v.Origin.Kind == "inf" {
		if e := res.data.read(main).firstNaNFrom(res.origin.root.index); e != nil {
			v.FirstNaN = &OpRef{Step: step, Rank: main, Op: e.name}
		} else if a.checked != nil {
			if rd := a.checked.data.read(main); rd != nil {
				if e := rd.firstNaNFrom(0); e != nil {
					v.FirstNaN = &OpRef{Step: a.checked.data.step, Rank: main, Op: e.name}
				}
			}
		}
	}
	v.Carrier, v.Spread = res.carrierAndSpread()
	if v.Carrier == nil && a.checked != nil {
		if c := res.carrierInto(a.checked); c != nil {
			v.Carrier = c
			v.Spread = append(v.Spread, *c)
		}
	}
	sortHops(v.Spread)
	return v
}

func ints(xs []int) []int {
	if xs == nil {
		return []int{}
	}
	return slices.Clone(xs)
}

// sortHops puts hops in canonical order: by step, op, senders, receivers.
func sortHops(hs []Hop) {
	sort.SliceStable(hs, func(i, j int) bool {
		a, b := hs[i], hs[j]
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		if c := slices.Compare(a.FromRanks, b.FromRanks); c != 0 {
			return c < 0
		}
		return slices.Compare(a.ToRanks, b.ToRanks) < 0
	})
}

// String is a one-line summary, for test failures.
func (v *Verdict) String() string {
	if v == nil {
		return "<nil>"
	}
	if !v.Anomaly {
		return fmt.Sprintf("no anomaly (steps %v, recovered %d)", v.Scanned.Steps, len(v.Recovered))
	}
	o := v.Origin
	return fmt.Sprintf("step %d ranks %v %s (%s/%s, %s) tie=%v captured=%v collective=%v unread=%v confidence=%s",
		o.Step, o.Ranks, o.Op, o.Stage, o.Phase, o.Kind, o.Tie, o.Captured, o.Collective, o.Unread, o.Confidence)
}
