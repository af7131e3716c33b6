package monitor

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/nanhunt/nanhunt/internal/climb"
)

// span is an inclusive range of steps.
type span struct{ lo, hi int }

// rangeSet is a set of steps kept as sorted, disjoint, non-adjacent spans:
// a few spans hold the steps of a whole run.
type rangeSet struct {
	spans []span
}

func (r *rangeSet) add(s int) {
	n := len(r.spans)
	if n > 0 {
		last := &r.spans[n-1]
		if s >= last.lo && s <= last.hi {
			return
		}
		if s == last.hi+1 {
			last.hi = s
			return
		}
	}
	if n == 0 || s > r.spans[n-1].hi {
		r.spans = append(r.spans, span{s, s})
		return
	}
	i := sort.Search(n, func(i int) bool { return r.spans[i].hi >= s-1 })
	if r.spans[i].lo <= s+1 {
		// s touches or lies in span i: extend it and merge with the next.
		if s < r.spans[i].lo {
			r.spans[i].lo = s
		}
		if s > r.spans[i].hi {
			r.spans[i].hi = s
		}
		if i+1 < len(r.spans) && r.spans[i+1].lo <= r.spans[i].hi+1 {
			r.spans[i].hi = max(r.spans[i].hi, r.spans[i+1].hi)
			r.spans = append(r.spans[:i+1], r.spans[i+2:]...)
		}
		return
	}
	r.spans = append(r.spans, span{})
	copy(r.spans[i+1:], r.spans[i:])
	r.spans[i] = span{s, s}
}

func (r *rangeSet) contains(s int) bool {
	i := sort.Search(len(r.spans), func(i int) bool { return r.spans[i].hi >= s })
	return i < len(r.spans) && r.spans[i].lo <= s
}

func (r *rangeSet) empty() bool { return len(r.spans) == 0 }

func (r *rangeSet) union(o *rangeSet) {
	all := append(append([]span(nil), r.spans...), o.spans...)
	sort.Slice(all, func(i, j int) bool { return all[i].lo < all[j].lo })
	var out []span
	for _, sp := range all {
		if n := len(out); n > 0 && sp.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, sp.hi)
			continue
		}
		out = append(out, sp)
	}
	r.spans = out
}

// String writes the set like "0-3,5".
func (r *rangeSet) String() string {
	var b strings.Builder
	for i, sp := range r.spans {
		if i > 0 {
			b.WriteByte(',')
		}
		if sp.lo == sp.hi {
			fmt.Fprintf(&b, "%d", sp.lo)
		} else {
			fmt.Fprintf(&b, "%d-%d", sp.lo, sp.hi)
		}
	}
	return b.String()
}

// orderKey orders the rows of one step of one rank the way msprobe's
// anomaly analyser orders alerts: micro-step, then virtual pipeline stage
// (ascending in the forward pass, descending otherwise), then call order.
type orderKey struct{ micro, vpp, call int }

func (a orderKey) less(b orderKey) bool {
	if a.micro != b.micro {
		return a.micro < b.micro
	}
	if a.vpp != b.vpp {
		return a.vpp < b.vpp
	}
	return a.call < b.call
}

func vppKey(k kind, vpp int) int {
	if vpp < 0 {
		return 0
	}
	if k == kActv {
		return vpp
	}
	return -vpp
}

// first is the first anomalous row of one kind on one rank: the earliest
// step, and within it the smallest orderKey.
type first struct {
	ok     bool
	step   int
	count  int64 // anomalous rows of this strength at step
	key    orderKey
	row    Row
	runID  int64
	inSeen int  // "in" tensors of the same module call seen
	inBad  bool // one of them was anomalous
}

// track is what the reader keeps of one kind on one rank: the steps
// recorded, counts, and the first strong and first weak anomalous rows.
type track struct {
	steps     rangeSet
	records   int64
	anomalous int64
	weakRows  int64
	strong    first
	weak      first
}

// rankState is everything kept of one rank.
type rankState struct {
	rank         int
	tracks       [numKinds]track
	nextRun      int64
	placeholders int64
	rows         int64
	files        int
	bytes        int64
	styles       map[string]bool
	warns        []Warning

	// judge, when set, follows every module statistic for a warning
	// before the NaN (climb.go); dtypes are the floating dtypes recorded.
	judge  AheadJudge
	climbs map[string]*climbSeries // by climbKey, while the rank is read
	fired  []climb.Series          // those that fired, once it is read
	dtypes map[string]bool
}

func newRankState(rank int, judge AheadJudge) *rankState {
	return &rankState{rank: rank, styles: map[string]bool{}, judge: judge, climbs: map[string]*climbSeries{}, dtypes: map[string]bool{}}
}

type callKey struct {
	kind kind
	step int
}

// fileSink feeds one file's rows into a rankState.
type fileSink struct {
	rs      *rankState
	file    string
	maxWarn int
	nwarn   int
	dropped int

	runValid  bool
	runKind   kind
	runStep   int
	runMicro  int
	runVpp    int
	runModule []byte
	runID     int64
	call      int
	inSeen    int
	inBad     bool
	calls     map[callKey]int
	key       []byte // climbKey's buffer
}

func newFileSink(rs *rankState, file string, maxWarn int) *fileSink {
	return &fileSink{rs: rs, file: file, maxWarn: maxWarn, calls: map[callKey]int{}}
}

func (f *fileSink) record() { f.rs.rows++ }

func (f *fileSink) warn(line int, msg string) {
	if f.nwarn >= f.maxWarn {
		f.dropped++
		return
	}
	f.nwarn++
	f.rs.warns = append(f.rs.warns, Warning{File: f.file, Line: line, Message: msg})
}

// close reports the warnings that were not listed.
func (f *fileSink) close() {
	if f.dropped > 0 {
		f.rs.warns = append(f.rs.warns, Warning{File: f.file, Message: fmt.Sprintf("%d more warnings in this file not listed", f.dropped)})
	}
}

func (f *fileSink) row(t *tensorRow) {
	f.followClimb(t)
	if t.an.skip {
		f.rs.placeholders++
	}
	tr := &f.rs.tracks[t.kind]
	tr.steps.add(t.step)
	if t.an.skip {
		return
	}
	tr.records++
	if !f.runValid || t.kind != f.runKind || t.step != f.runStep || t.micro != f.runMicro || t.vpp != f.runVpp || !bytes.Equal(t.module, f.runModule) {
		f.runValid = true
		f.runKind, f.runStep, f.runMicro, f.runVpp = t.kind, t.step, t.micro, t.vpp
		f.runModule = append(f.runModule[:0], t.module...)
		f.rs.nextRun++
		f.runID = f.rs.nextRun
		ck := callKey{t.kind, t.step}
		f.call = f.calls[ck]
		f.calls[ck] = f.call + 1
		f.inSeen, f.inBad = 0, false
	}
	if t.side == sideIn {
		f.inSeen++
		if t.an.kind != anNone && !t.an.weak {
			f.inBad = true
		}
		for _, fp := range [...]*first{&tr.strong, &tr.weak} {
			if fp.ok && fp.runID == f.runID {
				fp.inSeen, fp.inBad = f.inSeen, f.inBad
			}
		}
	}
	if t.an.kind == anNone {
		return
	}
	tr.anomalous++
	fp := &tr.strong
	if t.an.weak {
		tr.weakRows++
		fp = &tr.weak
	}
	key := orderKey{micro: max(t.micro, 0), vpp: vppKey(t.kind, t.vpp), call: f.call}
	switch {
	case !fp.ok || t.step < fp.step:
		*fp = first{ok: true, step: t.step, count: 1, key: key, row: f.materialize(t), runID: f.runID, inSeen: f.inSeen, inBad: f.inBad}
	case t.step == fp.step:
		fp.count++
		if key.less(fp.key) {
			n := fp.count
			*fp = first{ok: true, step: t.step, count: n, key: key, row: f.materialize(t), runID: f.runID, inSeen: f.inSeen, inBad: f.inBad}
		}
	}
}

// materialize copies a tensor row into a Row.
func (f *fileSink) materialize(t *tensorRow) Row {
	vals := map[string]string{}
	for k := range t.cols.stat {
		if t.cols.stat[k] >= 0 {
			vals[statNames[k]] = t.value(k)
		}
	}
	if t.lay.shape >= 0 {
		vals["shape"] = t.cellText(t.lay.shape)
	}
	if t.lay.dtype >= 0 {
		vals["dtype"] = t.cellText(t.lay.dtype)
	}
	return Row{
		Source:    t.kind.String(),
		Rank:      f.rs.rank,
		Step:      t.step,
		MicroStep: t.micro,
		VppStage:  t.vpp,
		Name:      string(t.module),
		Tensor:    string(t.tensor),
		Side:      t.side.String(),
		Call:      f.call,
		Kind:      t.an.kind.String(),
		Weak:      t.an.weak,
		Values:    vals,
		File:      f.file,
		Line:      t.line,
	}
}
