package trace

import (
	"fmt"
	"slices"
	"sort"

	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"

	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"
)

// verdict turns a mode's analysis into the answer.
func (m *modeResult) verdict() *verdict.Verdict {
	v := &verdict.Verdict{
		Schema:         verdict.Schema,
		SchemaRevision: verdict.Revision,
		Spread:         []verdict.Hop{},
		Candidates:     []verdict.Candidate{},
		Warnings:       append([]verdict.Warning{}, m.warnings...),
		Suppressed:     m.supp.list(),
		Recovered:      append([]verdict.Recovered{}, m.recovered...),
		NextSteps:      []string{},
		Steps:          append([]verdict.StepState{}, m.states...),
		Scanned: verdict.Scanned{
			Steps: m.scanned, Files: m.files, Cleared: m.cleared, Bytes: m.bytes, Entries: m.entries,
			NotScanned: m.notScanned, Mode: m.mode, CheckedNext: m.checked,
		},
	}
	v.Complete, v.Unread, v.NotDumped = len(m.unread) == 0 && len(m.missingNodes) == 0, append([]verdict.UnreadRanks{}, m.unread...), sortedKeys(m.notDumped)
	v.MissingNodes = m.missingNodes
	if v.Scanned.NotScanned == nil {
		v.Scanned.NotScanned = []int{}
	}
	if v.Scanned.Steps == nil {
		v.Scanned.Steps = []int{}
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
	if m.next != nil {
		b.beyond(m.next)
	}
	b.candidates()
	b.judge()
	b.explain()
	return v
}

// beyond looks for what the origin step did not show in the next dumped
// step, read whole: the first NaN on the main rank after an Inf, and the
// first hop into a rank that had no first sign at the origin step.
func (b *builder) beyond(next *stepResult) {
	v, main := b.v, b.p.main
	if v.FirstNaN == nil && v.Origin.Kind == "inf" {
		if l := next.locals[main]; l != nil && l.first != nil {
			s := next.scans[main]
			ev := l.firstNaN
			if (l.first.out|s.destOf(l.first))&nonfinite.NaN != 0 {
				ev = l.first
			}
			if ev != nil {
				v.FirstNaN = &verdict.OpRef{Step: next.step, Rank: main, Op: ev.name}
			}
		}
	}
	if v.Carrier != nil {
		return
	}
	var into []*hop
	for _, h := range next.hops {
		for _, t := range h.to {
			if l := b.r.locals[t]; l == nil || l.first == nil {
				into = append(into, h)
				break
			}
		}
	}
	kept := next.hops
	next.hops = into
	c, sender := next.carrier()
	next.hops = kept
	if c == nil {
		return
	}
	x := verdict.Hop{Step: next.step, Op: c.op, FromRanks: append([]int{}, c.from...), ToRanks: append([]int{}, c.to...), Group: append([]int{}, c.group...), Inferred: c.inferred}
	sort.Ints(x.ToRanks)
	if len(c.unseen) > 0 {
		x.Unread = c.unseen
	}
	if s := next.scans[sender]; s != nil {
		if oc := s.collByKey(c.key); oc != nil {
			x.Op = oc.name
		}
	}
	v.Carrier = &x
	v.Spread = append(v.Spread, x)
}

type builder struct {
	m   *modeResult
	r   *stepResult
	v   *verdict.Verdict
	p   pick
	det *details // the main rank's details
}

// recovered summarises an anomalous step that the next step no longer
// shows: its origin, with the stage README 6.8 gives weights the previous
// update wrote, as for the origin of a step that lasts.
func (r *stepResult) recovered(next int) verdict.Recovered {
	p := r.pick()
	stage, phase := p.root.phase.Stage(), p.root.phase.String()
	if !p.captured && !p.collective {
		if weights, _ := (&builder{r: r, p: p}).weightsFromUpdate(); weights {
			stage, phase = policy.Optimizer.Stage(), policy.Optimizer.String()
		}
	}
	return verdict.Recovered{Step: r.step, Ranks: p.ranks, Op: p.root.name, Stage: stage,
		Phase: phase, Kind: p.kind, NextStep: next}
}

// pick is the origin of a step as the ranks tell it (README "How it
// decides", 6.6), before any detail is read again.
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
	case len(r.collOrigins) > 0:
		for _, h := range r.collOrigins {
			p.ranks = append(p.ranks, h.to...)
		}
		sort.Ints(p.ranks)
		p.ranks = slices.Compact(p.ranks)
		p.main = p.ranks[0]
		l := r.locals[p.main]
		p.root = l.first
		p.captured, p.collective = true, true
		p.tie = len(r.collOrigins) > 1
		p.kind = kindName(l.kind, false)
	default:
		// Only receivers: whoever sent it was not read.
		p.unread = true
		receivers := []int{}
		for _, h := range r.hops {
			if len(h.from) == 0 {
				p.ranks = append(p.ranks, h.unseen...)
				receivers = append(receivers, h.to...)
			}
		}
		if len(receivers) == 0 {
			for _, h := range r.hops {
				p.ranks = append(p.ranks, h.unseen...)
				receivers = append(receivers, h.to...)
			}
		}
		sort.Ints(p.ranks)
		p.ranks = slices.Compact(p.ranks)
		sort.Ints(receivers)
		if len(receivers) > 0 {
			p.main = receivers[0]
		} else {
			for _, rank := range r.ranks {
				if r.locals[rank].first != nil {
					p.main = rank
					break
				}
			}
		}
		if len(p.ranks) == 0 {
			p.ranks = append(p.ranks, r.possibleSources(nil)...)
		}
		l := r.locals[p.main]
		p.root = l.first
		p.kind = kindName(l.kind, false)
	}
	return p
}

// possibleSources are the ranks of the step that could not be read or were
// not dumped, except the given ones.
func (r *stepResult) possibleSources(except []int) []int {
	out := without(append(append([]int{}, r.unreadRanks...), r.missing...), except)
	sort.Ints(out)
	return slices.Compact(out)
}

func (b *builder) origin() {
	r, v := b.r, b.v
	p := r.pick()
	b.p = p
	o := &verdict.Origin{Step: r.step, Ranks: p.ranks, Chain: []string{}, Reasons: []string{},
		Kind: p.kind, Tie: p.tie, Captured: p.captured, Collective: p.collective, Unread: p.unread}
	if o.Ranks == nil {
		o.Ranks = []int{}
	}
	o.PossibleSources = r.possibleSources(o.Ranks)
	v.Origin = o
	l := r.locals[p.main]
	if l.firstNaN != nil && o.Kind != "nan" { // at or after the root: the root itself, when it turned inherited Inf into NaN
		v.FirstNaN = &verdict.OpRef{Step: r.step, Rank: p.main, Op: l.firstNaN.name}
	}
	o.Op = p.root.name
	o.Stage, o.Phase = p.root.phase.Stage(), p.root.phase.String()
	s := r.scans[p.main]
	d := s.det
	switch {
	case d != nil:
	case s.loadDet != nil:
		d = s.loadDet()
	default:
		d = readDetails(s)
	}
	b.det = d
	v.Warnings = append(v.Warnings, d.Warnings...)
	if c := d.Chains[p.root.name]; len(c) > 0 {
		o.Chain = c
	}
	if uf := userFrames(d.Stacks[p.root.name]); len(uf) > 0 {
		o.Code = &uf[0]
		o.Stack = uf
	}
	if d.ChangedAfter != "" && s.changed == "" {
		s.changed = d.ChangedAfter
		v.Warnings = append(v.Warnings, verdict.Warning{File: s.dir.Dump, Message: "changed after it was analysed (" + s.changed + "): the origin's statistics below may be of another version"})
	}
	if rows := d.Rows[p.root.index]; rows != nil {
		if rows.Read {
			o.Inputs, o.Outputs = rows.Inputs, rows.Outputs
		}
		v.Warnings = append(v.Warnings, rows.Warnings...)
	}
	if !o.Captured && !o.Collective {
		b.interval()
	}
}

// interval brackets an origin that was not captured.
func (b *builder) interval() {
	o := b.v.Origin
	first := b.r.locals[b.p.main].first
	iv := &verdict.Interval{Before: verdict.OpRef{Step: b.r.step, Rank: b.p.main, Op: first.name}, Uncovered: []verdict.Frame{}}
	after := b.det.Stacks[first.name]
	if uf := userFrames(after); len(uf) > 0 {
		iv.Code = &uf[0]
	}
	if first.prevClean >= 0 {
		iv.After = &verdict.OpRef{Step: b.r.step, Rank: b.p.main, Op: first.prevCleanName}
		before := b.det.Stacks[first.prevCleanName]
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
	weights, why := b.weightsFromUpdate()
	if weights {
		// the weights came in non-finite: nothing between two calls of this step made it
		o.Interval = nil
		o.Stage, o.Phase = policy.Optimizer.Stage(), policy.Optimizer.String()
		o.Reasons = append(o.Reasons, why)
	}
}

// weightsFromUpdate: the origin is not captured, and either its first sign
// reads module parameters that already hold it, or at least two source
// ranks first show it at the same forward call in inputs that require
// grad (weights shared by data-parallel replicas, or held by one pipeline
// stage's replicas): the update at the end of the previous step wrote it.
func (b *builder) weightsFromUpdate() (bool, string) {
	first := b.r.locals[b.p.main].first
	if first.param != 0 {
		return true, fmt.Sprintf("%s reads module parameters that already hold it: the update at the end of step %d wrote them", first.name, b.r.step-1)
	}
	if len(b.r.sources) < 2 {
		return false, ""
	}
	// README 6.8: at least two of the source ranks, not all of them
	by := map[string][]int{}
	var names []string
	for _, rank := range b.r.sources {
		l := b.r.locals[rank]
		if l.first == nil || l.role != roleInherited || l.first.phase != policy.Forward || l.first.gradIn == 0 {
			continue
		}
		if by[l.first.name] == nil {
			names = append(names, l.first.name)
		}
		by[l.first.name] = append(by[l.first.name], rank)
	}
	for _, name := range names {
		if ranks := by[name]; len(ranks) >= 2 {
			return true, fmt.Sprintf("ranks %s first show it at %s, in an input that requires grad: weights they share already held it, so the update at the end of step %d wrote them",
				notation.FormatRanges(ranks), name, b.r.step-1)
		}
	}
	return false, ""
}

func (b *builder) spread() {
	r, v := b.r, b.v
	toHop := func(h *hop) verdict.Hop {
		x := verdict.Hop{Step: r.step, Op: h.op, FromRanks: append([]int{}, h.from...), ToRanks: append([]int{}, h.to...)}
		sort.Ints(x.ToRanks)
		if len(h.unseen) > 0 {
			x.Unread = h.unseen
		}
		x.Inferred = h.inferred
		x.Group = append([]int{}, h.group...)
		return x
	}
	c, sender := r.carrier()
	if c != nil {
		x := toHop(c)
		if oc := r.scans[sender].collByKey(c.key); oc != nil {
			x.Op = oc.name
		}
		v.Carrier = &x
		v.Spread = append(v.Spread, x)
	}
	for _, h := range r.hops {
		if h.collOrig || h == c {
			continue
		}
		v.Spread = append(v.Spread, toHop(h))
	}
}

// collByKey returns the rank's kept collective of a pairing key, or nil.
func (s *rankScan) collByKey(key string) *collEvent {
	for i := range s.colls {
		if s.colls[i].key == key {
			return &s.colls[i]
		}
	}
	return nil
}

// roleWord is how a rank met the anomaly, for candidates.
func (b *builder) roleWord(rank int) string {
	r := b.r
	l := r.locals[rank]
	switch {
	case slices.Contains(r.sources, rank) && (l.role == roleBirth || l.role == roleFlagged):
		return "origin"
	case slices.Contains(r.sources, rank):
		return "first seen here; its inputs already held it (origin not captured)"
	case slices.Contains(r.later, rank):
		return "a later birth: another rank held it first"
	case slices.Contains(r.inherited, rank):
		return "received through a path the dump does not record"
	case b.p.collective && slices.Contains(b.p.ranks, rank):
		return "origin: the collective made it from clean inputs"
	case l.role == roleReceived:
		return "received"
	}
	return "not captured"
}

func (b *builder) candidates() {
	r, v := b.r, b.v
	for _, rank := range r.ranks {
		l := r.locals[rank]
		if l.first == nil {
			continue
		}
		v.Candidates = append(v.Candidates, verdict.Candidate{Step: r.step, Rank: rank, Op: l.root.name, Index: l.root.index,
			Stage: l.root.phase.Stage(), Phase: l.root.phase.String(), Kind: kindName(l.kind, l.role == roleFlagged), Role: b.roleWord(rank)})
		// Later births that add a kind the rank did not hold yet (the NaN
		// after an Inf); more of the same kind are its consequences, such as
		// backward calls whose saved forward values were already NaN.
		s := r.scans[rank]
		n, seen := 0, l.kind
		for _, bt := range l.births {
			if bt == l.root || bt.index < l.root.index || n >= 3 || !s.isSevere(bt) || bt.birth&^seen == 0 {
				continue
			}
			n++
			seen |= bt.birth
			v.Candidates = append(v.Candidates, verdict.Candidate{Step: r.step, Rank: rank, Op: bt.name, Index: bt.index,
				Stage: bt.phase.Stage(), Phase: bt.phase.String(), Kind: kindName(bt.birth, false), Role: "later birth on the same rank"})
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
	l := r.locals[b.p.main]
	switch {
	case o.Unread:
		lower(1, "the ranks that sent it were not read (not dumped, or damaged); the origin is among them")
	case !o.Captured:
		lower(1, "the origin is not in the dump: the first call that shows it already had it in its inputs")
	case o.Collective:
		o.Reasons = append(o.Reasons, fmt.Sprintf("%s received clean inputs on every rank%s and returned non-finite values: the collective itself made them (for example a float16 sum that overflows)", o.Op, b.notEveryRank()))
	default:
		o.Reasons = append(o.Reasons, fmt.Sprintf("%s on rank %d turned inputs without %s into outputs with %s", o.Op, b.p.main, o.Kind, o.Kind))
	}
	if l.promoted {
		lower(2, fmt.Sprintf("the anomaly grew from -inf made by %s; -inf is also used for masks, so this link is a judgement", o.Op))
	}
	if o.Tie {
		switch {
		case o.Collective:
			lower(2, "the collective made it in more than one process group, independently")
		case o.Captured:
			lower(2, fmt.Sprintf("ranks %s made it independently before any collective connected them: they cannot be ordered", notation.FormatRanges(o.Ranks)))
		default:
			lower(2, fmt.Sprintf("ranks %s all hold it before any collective connected them: which had it first cannot be told", notation.FormatRanges(o.Ranks)))
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
	if len(r.inherited) > 0 {
		lower(2, fmt.Sprintf("%s first show%s it in %s inputs with no recorded collective bringing it (DDP's bucket all-reduce and other C++ collectives are not hooked by msprobe), or made it by code outside the dump",
			ranklist.Name(r.inherited), plural(len(r.inherited), "s", ""), plural(len(r.inherited), "its", "their")))
	}
	var damaged []int
	for _, rank := range r.ranks {
		if s := r.scans[rank]; s.damage != nil && !s.unread() {
			damaged = append(damaged, rank)
		}
	}
	var changed []int
	for _, rank := range r.ranks {
		if s := r.scans[rank]; s.changed != "" {
			changed = append(changed, rank)
		}
	}
	if len(changed) > 0 {
		lower(1, fmt.Sprintf("the dump of rank(s) %s at step %d changed while it was read: what was read may mix two versions", notation.FormatRanges(changed), r.step))
	}
	if len(damaged) > 0 {
		lower(2, fmt.Sprintf("the dump of rank(s) %s at step %d is damaged; only the entries before the damage were read", notation.FormatRanges(damaged), r.step))
	}
	if inexact := r.inexactRanks(); len(inexact) > 0 {
		lower(2, fmt.Sprintf("a bound of the scan was reached on %s at step %d and the file could not be read again past it (the warnings say which): part of its account is a guess", ranklist.Name(inexact), r.step))
	}
	if len(r.unreadRanks) > 0 && !o.Unread {
		lower(2, fmt.Sprintf("the dump of rank(s) %s at step %d could not be read (missing, empty, or damaged before its first entry): one of them may have made it first", notation.FormatRanges(r.unreadRanks), r.step))
	}
	for _, why := range b.m.lower {
		lower(2, why)
	}
	// a missing node's ranks are named by the join's own reason (b.m.lower)
	if missing := without(without(r.missing, r.noSummary), r.noDump); len(missing) > 0 {
		n := len(missing)
		lower(2, fmt.Sprintf("%s of step %d %s not dumped: %s may have made it first", ranklist.Name(missing), r.step, plural(n, "was", "were"), plural(n, "it", "one of them")))
	}
	if before := unreadBefore(b.m.unread, r.step); len(before) > 0 {
		lower(2, fmt.Sprintf("%s could not be read whole: an older anomaly there cannot be ruled out", ranklist.UnreadWords(before)))
	}
	if b.m.undecided {
		lower(2, fmt.Sprintf("step %d, the next dumped step, shows no anomaly in what could be read, but %s could not be read whole: whether the anomaly lasted cannot be told",
			*b.m.checked, b.m.notWholeWords(ranklist.UnreadAt(b.m.unread, *b.m.checked))))
	}
	if r.step > 0 && len(b.m.scanned) > 0 && b.m.scanned[0] == r.step && !o.Captured && !o.Unread {
		lower(1, fmt.Sprintf("step %d is the first step dumped: the anomaly may be older", r.step))
	}
	if c := b.v.Carrier; c != nil && namedPairingUnsure(r, c) {
		o.Reasons = append(o.Reasons, "the collectives record \"group\": null (msprobe older than 2024-11) and were paired by entry name, but not every rank of the step made the carrier's call: calls of different groups may have been joined")
	}
	if s := r.scans[b.p.main]; s.tensors > 0 && s.statless*2 >= s.entries {
		lower(2, "most calls of the origin rank have no Max/Min statistics")
	}
	o.Confidence = [...]string{"low", "low", "medium", "high"}[level]
	v.NextSteps = b.advice()
}

// notEveryRank qualifies "every rank" when some rank of the origin step
// was not read: " read (ranks 6,7 were not)", or "" when every rank was.
func (b *builder) notEveryRank() string {
	unseen := b.r.possibleSources(nil)
	switch {
	case len(unseen) > 0:
		return fmt.Sprintf(" read (%s %s not)", ranklist.Name(unseen), plural(len(unseen), "was", "were"))
	case len(b.m.missingNodes) > 0:
		return " read (a node sent no summary)"
	}
	return ""
}

// namedPairingUnsure reports whether the carrier was paired by entry name
// ("group": null) where that could join calls of different process groups:
// entry counters restart every step on every rank, so the k-th call of an
// API is the same call everywhere only when every rank makes it. When
// senders and receivers together are every rank of the step, it is.
func namedPairingUnsure(r *stepResult, c *verdict.Hop) bool {
	named := false
	for _, rank := range r.ranks {
		if cl := r.locals[rank]; cl.role == roleReceived && r.scans[rank].collOf(cl.first).named {
			named = true
			break
		}
	}
	if !named {
		return false
	}
	in := map[int]bool{}
	for _, x := range c.FromRanks {
		in[x] = true
	}
	for _, x := range c.ToRanks {
		in[x] = true
	}
	for _, rank := range r.ranks {
		if !in[rank] {
			return true
		}
	}
	return false
}

// plural is one or many, by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// inexactRanks are the ranks of the step whose account is partly a guess
// (rankScan.inexact).
func (r *stepResult) inexactRanks() []int {
	var out []int
	for _, rank := range r.ranks {
		if s := r.scans[rank]; s != nil && s.inexact {
			out = append(out, rank)
		}
	}
	return out
}
