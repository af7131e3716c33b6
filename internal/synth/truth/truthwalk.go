package truth

import "github.com/nanhunt/nanhunt/internal/synth/spec"

// Walk follows README 7 over the dumped steps as the simulation
// reaches them: the first anomalous step that the next dumped step does not
// show clean again is the origin step, and the next dumped step is read to
// check it; an anomalous step followed by one read whole and clean is
// recovered, and the walk goes on after the clean one.
type Walk struct {
	spec      *spec.Spec
	pending   *vResult // an anomalous step waiting for the next dumped step
	origin    *vResult
	checked   *vResult
	recovered []Recovered
	done      bool
	// cuts are the truncation offsets of damaged dump.json files
	cuts map[[2]int]int64
}

// step walks one dumped step; last tells the last dumped step.
func (t *Walk) step(v *stepView, last bool) {
	if t.done {
		return
	}
	if t.pending == nil {
		if !v.anomalous() {
			return
		}
		res := v.analyse()
		if last {
			t.origin, t.done = res, true
			return
		}
		t.pending = res
		return
	}
	if v.anomalous() {
		t.origin, t.checked, t.done = t.pending, v.analyse(), true
		return
	}
	if !v.everyRankWhole() {
		// README 9: a next step that shows nothing but was not read whole
		// cannot tell that the anomaly did not last; it stands
		t.origin, t.done = t.pending, true
		return
	}
	o := &t.pending.origin
	t.recovered = append(t.recovered, Recovered{Step: t.pending.v.step, Ranks: append([]int{}, o.ranks...), Op: o.root.name,
		Stage: o.ph.Stage(), Phase: o.ph.Name(), Kind: o.kind, NextStep: v.step})
	t.pending = nil
}

// originOf is the origin the walk found, nil when none.
func (t *Walk) originOf() *vOrigin {
	if t.origin == nil {
		return nil
	}
	return &t.origin.origin
}

// everyRankWhole reports whether every rank's dump.json of the step can be read
// whole.
func (s *stepView) everyRankWhole() bool {
	for _, v := range s.ranks {
		if v.status != readWhole {
			return false
		}
	}
	return true
}
