package monitor

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/climb"
)

// AheadJudge tells whether a module's statistic ("max" or "min"), its
// last points oldest first, warns at its last point; dtype is the one the
// row recorded ("torch.float16"), "" when the CSV has no dtype column.
// Package ahead holds the rule; the reader only follows the series.
type AheadJudge func(dtype, stat string, window []climb.Point) bool

// climbSeries follows the max and min of one tensor row (a kind, virtual
// pipeline stage and name) of one rank, step by step: the rows of one
// step (its micro-steps) are folded into the largest max and the
// smallest min before the step is judged.
type climbSeries struct {
	kind  kind
	name  string
	dtype string
	step  int  // the step being folded
	open  bool // a step is being folded
	val   [2]float64
	has   [2]bool
	bad   [2]bool // a non-finite value at the step: the series stops
	track [2]climb.Track
}

// The statistics followed, as indexed in climbSeries.
var climbStats = [2]struct {
	name string
	col  int
}{{"max", sMax}, {"min", sMin}}

// climbKey names a series within a rank.
type climbKey struct {
	kind kind
	vpp  int
	name string
}

// followClimb folds a tensor row into its series. Rows of integer and bool
// tensors never overflow to a non-finite value and are not followed.
func (f *fileSink) followClimb(t *tensorRow) {
	judge := f.rs.judge
	if judge == nil || t.an.skip {
		return
	}
	dtype := strings.TrimSpace(t.cellText(t.lay.dtype))
	if isNaNWord([]byte(dtype)) {
		dtype = ""
	}
	if dtype != "" {
		if !floatDtype(dtype) {
			return
		}
		f.rs.dtypes[dtype] = true
	}
	name := string(t.module)
	if len(t.tensor) > 0 {
		name += "." + string(t.tensor)
	}
	key := climbKey{t.kind, t.vpp, name}
	cs := f.rs.climbs[key]
	if cs == nil {
		cs = &climbSeries{kind: t.kind, name: name}
		f.rs.climbs[key] = cs
	}
	if dtype != "" {
		cs.dtype = dtype
	}
	switch {
	case cs.open && t.step < cs.step:
		return // read out of order: the series goes forward only
	case cs.open && t.step > cs.step:
		cs.commit(judge)
	}
	if !cs.open {
		cs.open, cs.step, cs.has, cs.bad = true, t.step, [2]bool{}, [2]bool{}
	}
	for i, st := range climbStats {
		v, ok := t.number(st.col)
		switch {
		case !ok:
		case math.IsNaN(v) || math.IsInf(v, 0):
			// an empty tensor's nan statistics are no sign of anything
			cs.bad[i] = cs.bad[i] || t.an.kind != anNone
		case !cs.has[i] || (i == 0 && v > cs.val[i]) || (i == 1 && v < cs.val[i]):
			cs.val[i], cs.has[i] = v, true
		}
	}
}

// commit judges the folded step.
func (cs *climbSeries) commit(judge AheadJudge) {
	if !cs.open {
		return
	}
	cs.open = false
	for i, st := range climbStats {
		switch {
		case cs.bad[i]:
			cs.track[i].Stop(cs.step)
		case cs.has[i]:
			cs.track[i].Add(climb.Point{Step: cs.step, Value: cs.val[i]}, func(w []climb.Point) bool {
				return judge(cs.dtype, st.name, w)
			})
		}
	}
}

// number reads a statistic column as a number; false when the row has no
// such column or the cell is not a number. Booleans read as 1 and 0.
func (t *tensorRow) number(col int) (float64, bool) {
	i := t.cols.stat[col]
	if i < 0 || i >= len(t.fields) {
		return 0, false
	}
	b := t.fields[i]
	if c, ok := boolCell(b); ok {
		if c.zero {
			return 0, true
		}
		return 1, true
	}
	if c, ok := nonfiniteCell(b); ok {
		return c, true
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil && v == 0 {
		return 0, false
	}
	return v, true
}

// nonfiniteCell reads the spellings of NaN and the infinities.
func nonfiniteCell(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	i := 0
	if b[0] == '+' || b[0] == '-' {
		i = 1
	}
	if i >= len(b) || (b[i]|0x20 != 'n' && b[i]|0x20 != 'i') {
		return 0, false
	}
	switch classify(b).class {
	case vNaN:
		return math.NaN(), true
	case vPosInf:
		return math.Inf(1), true
	case vNegInf:
		return math.Inf(-1), true
	}
	return 0, false
}

// floatDtype reports a floating dtype as TrainerMon writes it.
func floatDtype(dtype string) bool {
	switch strings.TrimPrefix(dtype, "torch.") {
	case "float16", "half", "bfloat16", "float32", "float", "float64", "double":
		return true
	}
	return false
}

// finishClimbs judges the last step of every series of the rank.
func (rs *rankState) finishClimbs() {
	for _, cs := range rs.climbs {
		cs.commit(rs.judge)
	}
}

// Climbs are the series of module statistics that a warning before the
// NaN fired on (Options.Ahead), by rank, kind, name and statistic; nil
// when Read was given no judge.
func (r *Run) Climbs() []climb.Series {
	var out []climb.Series
	for _, rs := range r.ranks {
		for key, cs := range rs.climbs {
			for i, st := range climbStats {
				if cs.track[i].Fired == nil {
					continue
				}
				name := key.name
				if key.vpp > 0 {
					name = strconv.Itoa(key.vpp) + ":" + name
				}
				out = append(out, climb.Series{Rank: rs.rank, Op: name, Tensor: cs.kind.String(), Stat: st.name, Dtype: cs.dtype, Track: cs.track[i]})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		if a.Tensor != b.Tensor {
			return a.Tensor < b.Tensor
		}
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		return a.Stat < b.Stat
	})
	return out
}

// Dtypes are the floating dtypes the monitor's rows recorded, sorted.
func (r *Run) Dtypes() []string {
	seen := map[string]bool{}
	for _, rs := range r.ranks {
		for d := range rs.dtypes {
			seen[d] = true
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
