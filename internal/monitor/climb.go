package monitor

import (
	"bytes"
	"math"
	"sort"
	"strconv"

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
	vpp   int
	name  string
	dtype string
	judge [2]climb.Judge // the rank's judge for each statistic
	step  int            // the step being folded
	open  bool           // a step is being folded
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

// climbKey writes the key of a series within a rank into buf: its kind,
// virtual pipeline stage and name.
func climbKey(buf []byte, k kind, vpp int, module, tensor []byte) []byte {
	buf = append(buf[:0], byte(k))
	buf = strconv.AppendInt(buf, int64(vpp), 10)
	buf = append(buf, 0)
	buf = append(buf, module...)
	if len(tensor) > 0 {
		buf = append(buf, '.')
		buf = append(buf, tensor...)
	}
	return buf
}

// followClimb folds a tensor row into its series. Rows of integer and bool
// tensors never overflow to a non-finite value and are not followed.
func (f *fileSink) followClimb(t *tensorRow) {
	judge := f.rs.judge
	if judge == nil || t.an.skip {
		return
	}
	var dtype []byte
	if i := t.lay.dtype; i >= 0 && i < len(t.fields) {
		dtype = bytes.TrimSpace(t.fields[i])
	}
	if isNaNWord(dtype) {
		dtype = nil
	}
	if len(dtype) > 0 {
		if !floatDtype(dtype) {
			return
		}
		if !f.rs.dtypes[string(dtype)] {
			f.rs.dtypes[string(dtype)] = true
		}
	}
	f.key = climbKey(f.key, t.kind, t.vpp, t.module, t.tensor)
	cs := f.rs.climbs[string(f.key)]
	if cs == nil {
		cs = newClimbSeries(t, judge)
		f.rs.climbs[string(f.key)] = cs
	}
	if len(dtype) > 0 && cs.dtype != string(dtype) {
		cs.dtype = string(dtype)
	}
	switch {
	case cs.open && t.step < cs.step:
		return // read out of order: the series goes forward only
	case cs.open && t.step > cs.step:
		cs.commit()
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

func newClimbSeries(t *tensorRow, judge AheadJudge) *climbSeries {
	name := string(t.module)
	if len(t.tensor) > 0 {
		name += "." + string(t.tensor)
	}
	cs := &climbSeries{kind: t.kind, vpp: t.vpp, name: name}
	for i, st := range climbStats {
		cs.judge[i] = func(w []climb.Point) bool { return judge(cs.dtype, st.name, w) }
	}
	return cs
}

// commit judges the folded step.
func (cs *climbSeries) commit() {
	if !cs.open {
		return
	}
	cs.open = false
	for i := range climbStats {
		switch {
		case cs.bad[i]:
			cs.track[i].Stop(cs.step)
		case cs.has[i]:
			cs.track[i].Add(climb.Point{Step: cs.step, Value: cs.val[i]}, cs.judge[i])
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
	if v, ok := parseDecimal(b); ok {
		return v, true
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil && v == 0 {
		return 0, false
	}
	return v, true
}

// exactPow10 are the powers of ten a float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseDecimal reads a plain decimal ("-0.123456", "44000.0", "1.5e+04")
// of at most 15 significant digits whose power of ten a float64 holds
// exactly: the digits as an integer times or over that power is then the
// correctly rounded value, as strconv.ParseFloat gives it. ok is false for
// anything else, which ParseFloat reads.
func parseDecimal(b []byte) (float64, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, i = b[0] == '-', 1
	}
	var mant uint64
	digits, exp, seen, dot := 0, 0, false, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			seen = true
			if dot {
				exp--
			}
			if mant == 0 && c == '0' {
				continue // a leading zero
			}
			if digits == 15 {
				return 0, false
			}
			mant = mant*10 + uint64(c-'0')
			digits++
			continue
		case c == '.' && !dot:
			dot = true
			continue
		}
		break
	}
	if !seen {
		return 0, false
	}
	if i < len(b) {
		e, ok := parseExponent(b[i:])
		if !ok {
			return 0, false
		}
		exp += e
	}
	v := float64(mant)
	switch {
	case mant == 0:
	case exp >= 0 && exp < len(exactPow10):
		v *= exactPow10[exp]
	case exp < 0 && -exp < len(exactPow10):
		v /= exactPow10[-exp]
	default:
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseExponent reads "e+04", "E-5", "e12": at most three digits.
func parseExponent(b []byte) (int, bool) {
	if len(b) < 2 || (b[0] != 'e' && b[0] != 'E') {
		return 0, false
	}
	b = b[1:]
	neg := b[0] == '-'
	if b[0] == '-' || b[0] == '+' {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 3 {
		return 0, false
	}
	e := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		e = e*10 + int(c-'0')
	}
	if neg {
		e = -e
	}
	return e, true
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
func floatDtype(dtype []byte) bool {
	switch string(bytes.TrimPrefix(dtype, []byte("torch."))) {
	case "float16", "half", "bfloat16", "float32", "float", "float64", "double":
		return true
	}
	return false
}

// finishClimbs judges the last step of every series of the rank and
// keeps only those that fired: a rank that has been read holds no series
// of its rows.
func (rs *rankState) finishClimbs() {
	for _, cs := range rs.climbs {
		cs.commit()
		for i, st := range climbStats {
			if cs.track[i].Fired == nil {
				continue
			}
			name := cs.name
			if cs.vpp > 0 {
				name = strconv.Itoa(cs.vpp) + ":" + name
			}
			rs.fired = append(rs.fired, climb.Series{Rank: rs.rank, Op: name, Tensor: cs.kind.String(), Stat: st.name, Dtype: cs.dtype, Track: cs.track[i]})
		}
	}
	rs.climbs = nil
}

// Climbs are the series of module statistics that a warning before the
// NaN fired on (Options.Ahead), by rank, kind, name and statistic; nil
// when Read was given no judge.
func (r *Run) Climbs() []climb.Series {
	var out []climb.Series
	for _, rs := range r.ranks {
		out = append(out, rs.fired...)
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
