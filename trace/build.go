package trace

import (
	"fmt"
	"sort"

	"github.com/nanhunt/nanhunt/dump"
)

// verdict turns a mode's analysis into the answer.
func (m *modeResult) verdict() *Verdict {
	v := &Verdict{
		Schema:     Schema,
		Spread:     []Hop{},
		Candidates: []Candidate{},
		Warnings:   append([]Warning{}, m.warnings...),
		Suppressed: m.supp.list(),
		Recovered:  append([]Recovered{}, m.recovered...),
		NextSteps:  []string{},
		Steps:      append([]StepState{}, m.states...),
		Scanned: Scanned{
			Steps: m.scanned, Files: m.files, Cleared: m.cleared, Bytes: m.bytes, Entries: m.entries,
			NotScanned: m.notScanned, Mode: m.mode, CheckedNext: m.checked,
		},
	}
	if v.Scanned.NotScanned == nil {
		v.Scanned.NotScanned = []int{}
	}
	ranks := map[int]bool{}
	r := m.hit
	if r == nil {
		if m.prev != nil {
			for _, rank := range m.prev.ranks {
				ranks[rank] = true
			}
		}
		v.Scanned.Ranks = setList(ranks)
		v.NextSteps = cleanAdvice(m)
		return v
	}
	for _, rank := range r.ranks {
		ranks[rank] = true
	}
	v.Scanned.Ranks = setList(ranks)
	step := r.step
	v.Scanned.StoppedAt = &step
	v.Anomaly = true

	b := &builder{m: m, r: r, v: v}
	b.origin()
	b.spread()
	b.candidates()
	b.judge()
	return v
}

type builder struct {
	m    *modeResult
	r    *stepResult
	v    *Verdict
	main int        // the rank whose view the origin details come from
	side *rankFiles // its stack.json and construct.json
	root *event
}

// recovered summarises an anomalous step that the next step no longer shows.
func (r *stepResult) recovered() Recovered {
	p := r.pick()
	return Recovered{Step: r.step, Ranks: p.ranks, Op: p.root.name, Stage: r.scans[p.main].stage(p.root), Kind: p.kind}
}

// pick is the origin of a step as the ranks tell it, before any detail is
// read again.
type pick struct {
	ranks      []int
	main       int    // the rank whose view the details come from
	root       *event // the origin call on main
	kind       string
	tie        bool
	captured   bool
	collective bool
	unread     bool // only receivers were read: the ranks that sent it were not
}

func (r *stepResult) pick() pick {
	var p pick
	switch {
	case len(r.sources) > 0:
		p.ranks = append(p.ranks, r.sources...)
		p.main = r.sources[0]
		for _, rank := range r.sources {
			if l := r.locals[rank]; l.role == roleBirth || l.role == roleFlagged {
				p.main = rank
				break
			}
		}
		l := r.locals[p.main]
		p.root = l.root
		p.tie = len(r.sources) > 1
		p.captured = l.role == roleBirth || l.role == roleFlagged
		p.kind = kindName(l.kind, l.role == roleFlagged)
	case r.collOrigin != nil:
		p.ranks = append(p.ranks, r.collOrigin.to...)
		sort.Ints(p.ranks)
		p.main = p.ranks[0]
		l := r.locals[p.main]
		p.root = l.first
		p.captured, p.collective = true, true
		p.kind = kindName(l.kind, false)
	default:
		// Only receivers: whoever sent it was not read.
		h := r.hops[0]
		for _, x := range r.hops {
			if len(x.from) == 0 {
				h = x
				break
			}
		}
		p.ranks = append(p.ranks, h.missing...)
		p.unread = true
		p.main = h.to[0]
		l := r.locals[p.main]
		p.root = l.first
		p.kind = kindName(l.kind, false)
	}
	return p
}

func (b *builder) origin() {
	r, v := b.r, b.v
	p := r.pick()
	o := &Origin{Step: r.step, Ranks: p.ranks, Chain: []string{}, Reasons: []string{},
		Kind: p.kind, Tie: p.tie, Captured: p.captured, Collective: p.collective, Unread: p.unread}
	if o.Ranks == nil {
		o.Ranks = []int{}
	}
	v.Origin = o
	b.main, b.root = p.main, p.root
	if l := r.locals[b.main]; l.firstNaN != nil && l.firstNaN != l.root && o.Kind != "nan" {
		v.FirstNaN = &OpRef{Step: r.step, Rank: b.main, Op: l.firstNaN.name}
	}
	o.Op = b.root.name
	s := r.scans[b.main]
	o.Stage = s.stage(b.root)

	names := []string{b.root.name}
	if lf := r.locals[b.main].first; lf != nil {
		names = append(names, lf.name)
		if lf.prevCleanName != "" {
			names = append(names, lf.prevCleanName)
		}
	}
	b.side = readSideFiles(s.dir, names)
	v.Warnings = append(v.Warnings, b.side.warnings...)
	if b.side.construct != nil {
		if c := b.side.construct.Chain(b.root.name); len(c) > 0 {
			o.Chain = c
		}
		if b.side.construct.InUpdate(b.root.name) {
			o.Stage = "optimizer"
		}
	}
	frames := b.side.stackOf(b.root.name)
	if uf := userFrames(frames); len(uf) > 0 {
		o.Code = &uf[0]
		o.Stack = uf
	}
	if e, err := readEntry(s.dir.Dump, b.root.offset, b.root.end); err == nil {
		o.Inputs, o.Outputs = tensorStats(e)
	} else {
		v.Warnings = append(v.Warnings, Warning{File: s.dir.Dump, Message: err.Error()})
	}
	if !o.Captured && !o.Collective {
		b.interval()
	}
}

// interval brackets an origin that was not captured.
func (b *builder) interval() {
	o := b.v.Origin
	first := b.r.locals[b.main].first
	iv := &Interval{Before: OpRef{Step: b.r.step, Rank: b.main, Op: first.name}, Uncovered: []dump.Frame{}}
	after := b.side.stackOf(first.name)
	if uf := userFrames(after); len(uf) > 0 {
		iv.Code = &uf[0]
	}
	if first.prevClean >= 0 {
		iv.After = &OpRef{Step: b.r.step, Rank: b.main, Op: first.prevCleanName}
		before := b.side.stackOf(first.prevCleanName)
		if uf := userFrames(before); len(uf) > 0 {
			iv.AfterCode = &uf[0]
		}
		if len(after) > 0 {
			iv.Uncovered = uncovered(after, before)
		}
	} else if len(after) > 0 {
		iv.Uncovered = userFrames(after)
	}
	o.Interval = iv
	switch {
	case first.param != 0 || b.replicated():
		// the weights came in non-finite: nothing between two calls of this step made it
		o.Interval = nil
	}
	switch {
	case first.param != 0:
		o.Stage = "optimizer"
		o.Reasons = append(o.Reasons, fmt.Sprintf("%s reads module parameters that already hold it: the update at the end of step %d wrote them", first.name, b.r.step-1))
	case b.replicated():
		o.Stage = "optimizer"
		o.Reasons = append(o.Reasons, fmt.Sprintf("every rank first shows it at %s, in an input that requires grad: weights replicated on all ranks already held it, so the update at the end of step %d wrote them", first.name, b.r.step-1))
	}
}

// replicated reports whether every rank first shows the anomaly at the same
// forward call, in an input that requires grad: the mark of weights that
// data-parallel ranks share, not of one rank's data.
func (b *builder) replicated() bool {
	if len(b.r.ranks) < 2 {
		return false
	}
	name := ""
	for _, rank := range b.r.ranks {
		l := b.r.locals[rank]
		if l.first == nil || l.role != roleInherited || l.first.dir != dump.Forward || l.first.gradIn == 0 {
			return false
		}
		if name == "" {
			name = l.first.name
		} else if l.first.name != name {
			return false
		}
	}
	return true
}

func (b *builder) spread() {
	r, v := b.r, b.v
	toHop := func(h *hop) Hop {
		x := Hop{Step: r.step, Op: h.op, FromRanks: append([]int{}, h.from...), ToRanks: append([]int{}, h.to...)}
		sort.Ints(x.ToRanks)
		if len(h.missing) > 0 {
			x.Unread = h.missing
		}
		x.Inferred = h.inferred
		x.Group = append([]int{}, h.group...)
		return x
	}
	for _, h := range r.hops {
		if h == r.collOrigin {
			continue
		}
		v.Spread = append(v.Spread, toHop(h))
	}
	if c := r.carrier(); c != nil && c != r.collOrigin {
		x := toHop(c)
		v.Carrier = &x
	}
}

func (b *builder) candidates() {
	r, v := b.r, b.v
	src := map[int]bool{}
	for _, s := range r.sources {
		src[s] = true
	}
	unrec := map[int]bool{}
	for _, u := range r.unrecorded {
		unrec[u] = true
	}
	for _, rank := range r.ranks {
		l := r.locals[rank]
		if l.first == nil {
			continue
		}
		s := r.scans[rank]
		role := ""
		switch {
		case src[rank] && (l.role == roleBirth || l.role == roleFlagged):
			role = "origin"
		case src[rank]:
			role = "first seen here; its inputs already held it (origin not captured)"
		case unrec[rank]:
			role = "received through a path the dump does not record"
		case l.role == roleReceived && r.collOrigin != nil && s.collOf(l.first).key == r.collOrigin.key:
			role = "origin: the collective made it from clean inputs"
		case l.role == roleReceived:
			role = "received"
		default:
			role = "not captured"
		}
		v.Candidates = append(v.Candidates, Candidate{Step: r.step, Rank: rank, Op: l.root.name, Index: l.root.index,
			Stage: s.stage(l.root), Kind: kindName(l.kind, l.role == roleFlagged), Role: role})
		// Later births that add a kind the rank did not hold yet (the NaN
		// after an Inf); more of the same kind are its consequences, such as
		// backward calls whose saved forward values were already NaN.
		n, seen := 0, l.kind
		for _, bt := range l.births {
			if bt == l.root || bt.index < l.root.index || n >= 3 || !s.isSevere(bt) || bt.birth&^seen == 0 {
				continue
			}
			n++
			seen |= bt.birth
			v.Candidates = append(v.Candidates, Candidate{Step: r.step, Rank: rank, Op: bt.name, Index: bt.index,
				Stage: s.stage(bt), Kind: kindName(bt.birth, false), Role: "later birth on the same rank"})
		}
	}
}

// judge sets the confidence, its reasons, and what to do next.
func (b *builder) judge() {
	o, r, v := b.v.Origin, b.r, b.v
	level := 3 // high
	lower := func(to int, reason string) {
		level = min(level, to)
		o.Reasons = append(o.Reasons, reason)
	}
	l := r.locals[b.main]
	switch {
	case o.Unread:
		lower(1, "the ranks that sent it were not read (not dumped, or damaged); the origin is among them")
	case !o.Captured:
		lower(1, "the origin is not in the dump: the first call that shows it already had it in its inputs")
	case o.Collective:
		o.Reasons = append(o.Reasons, fmt.Sprintf("%s received clean inputs on every rank and returned non-finite values: the collective itself made them (for example a float16 sum that overflows)", o.Op))
	default:
		o.Reasons = append(o.Reasons, fmt.Sprintf("%s on rank %d turned inputs without %s into outputs with %s", o.Op, b.main, o.Kind, o.Kind))
	}
	if l.promoted {
		lower(2, fmt.Sprintf("the anomaly grew from -inf made by %s; -inf is also used for masks, so this link is a judgement", o.Op))
	}
	if o.Tie {
		if o.Captured {
			lower(2, fmt.Sprintf("ranks %s made it independently before any collective connected them: they cannot be ordered", dump.FormatRanges(o.Ranks)))
		} else {
			lower(2, fmt.Sprintf("ranks %s all hold it before any collective connected them: which had it first cannot be told", dump.FormatRanges(o.Ranks)))
		}
		ops := map[string]bool{}
		for _, s := range r.sources {
			ops[r.locals[s].root.name] = true
		}
		if len(ops) > 1 {
			o.Reasons = append(o.Reasons, "the tied ranks made it at different calls; each is listed under candidates")
		}
	}
	if o.Kind == "overflow" {
		lower(2, "nan_check dumps record only the NPU overflow flag: NaN and Inf cannot be told apart, and the flag can report an intermediate overflow whose output is finite")
	}
	if len(r.unrecorded) > 0 {
		lower(2, fmt.Sprintf("ranks %s first show it in inputs later in the step, with no recorded collective bringing it (DDP's bucket all-reduce and other C++ collectives are not hooked by msprobe)", dump.FormatRanges(r.unrecorded)))
	}
	var damaged, missing []int
	for _, rank := range r.ranks {
		if s := r.scans[rank]; s.damage != nil || s.openErr != nil {
			damaged = append(damaged, rank)
		}
	}
	if len(damaged) > 0 {
		to := 2
		if s := r.scans[b.main]; s.damage != nil && s.entries <= b.root.index+1 {
			to = 1
		}
		lower(to, fmt.Sprintf("the dump of rank(s) %s at step %d is damaged; only the entries before the damage were read", dump.FormatRanges(damaged), r.step))
	}
	if r.step > 0 && b.m.scanned[0] == r.step && !o.Captured && !o.Unread {
		lower(1, fmt.Sprintf("step %d is the first step dumped: the anomaly may be older", r.step))
	}
	if max := maxRank(r.ranks); len(r.ranks) < max+1 {
		for rk := 0; rk <= max; rk++ {
			if _, ok := r.scans[rk]; !ok {
				missing = append(missing, rk)
			}
		}
		lower(2, fmt.Sprintf("ranks %s of step %d were not dumped: one of them may have made it first", dump.FormatRanges(missing), r.step))
	}
	if c := b.v.Carrier; c != nil {
		for _, rank := range r.ranks {
			if cl := r.locals[rank]; cl.role == roleReceived && r.scans[rank].collOf(cl.first).named {
				o.Reasons = append(o.Reasons, "the collectives carry no group (the default group, or msprobe older than 2024-11): they were paired by entry name")
				break
			}
		}
	}
	if s := r.scans[b.main]; s.tensors > 0 && s.statless*2 >= s.entries {
		lower(2, "most calls of the origin rank have no Max/Min statistics")
	}
	o.Confidence = [...]string{"low", "low", "medium", "high"}[level]
	v.NextSteps = b.advice()
}

func maxRank(ranks []int) int {
	m := -1
	for _, r := range ranks {
		m = max(m, r)
	}
	return m
}
