package monitor

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
)

// analyze builds the Findings of a read run.
func analyze(ctx context.Context, r *Run, opt Options) Findings {
	f := Findings{
		Schema:       Schema,
		HeaderStyles: append([]string{}, r.styles...),
		Folders:      len(r.Folders),
		FilesRead:    r.FilesRead,
		RowsRead:     r.RowsRead,
		Step:         -1,
	}
	gens := map[string]bool{}
	for _, fo := range r.Folders {
		gens[fo.Generation] = true
	}
	var gl []string
	for g := range gens {
		gl = append(gl, g)
	}
	sort.Strings(gl)
	f.Generation = strings.Join(gl, "+")
	f.Ranks = []int{}
	for _, rs := range r.ranks {
		f.Ranks = append(f.Ranks, rs.rank)
		f.PlaceholderRows += rs.placeholders
		for k := range rs.tracks {
			f.AnomalousRows += rs.tracks[k].anomalous
		}
	}
	f.Recorded = summaries(r)

	fw := activations(r, kActv)
	bw := activations(r, kActvGrad)
	gr := gradients(r)
	var probes []*probe
	partnerProbe := func(a *Activations, k kind) *probe {
		if a == nil {
			return nil
		}
		p := &probe{kind: k, step: a.Step, module: a.First.Name, tensor: a.First.Tensor, micro: a.First.MicroStep, vpp: a.First.VppStage, weakMode: a.Weak}
		probes = append(probes, p)
		return p
	}
	pf, pb := partnerProbe(fw, kActv), partnerProbe(bw, kActvGrad)
	var pgb, pga *probe
	if gr != nil {
		sideProbe := func(s *GradSide, k kind) *probe {
			if s.First == nil {
				return nil
			}
			p := &probe{kind: k, step: gr.Step, module: s.First.Name, tensor: s.First.Tensor, vpp: s.First.VppStage, anyMicro: true, weakMode: gr.Weak}
			probes = append(probes, p)
			return p
		}
		pgb, pga = sideProbe(gr.Before, kGradUnreduced), sideProbe(gr.After, kGradReduced)
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	runProbes(ctx, r, probes, jobs)
	if fw != nil {
		fw.Partners = partners(fw, pf, opt.Groups)
		fw.Reason = activationReason(fw, "forward")
	}
	if bw != nil {
		bw.Partners = partners(bw, pb, opt.Groups)
		bw.Reason = activationReason(bw, "backward")
	}
	if gr != nil {
		if pgb != nil {
			gr.Before.FirstRanks = anomalousRanks(pgb)
		}
		if pga != nil {
			gr.After.FirstRanks = anomalousRanks(pga)
		}
	}
	f.Forward, f.Backward, f.Gradients = fw, bw, gr
	f.Optimizer = optimizer(r)
	f.Origin = pickOrigin(&f)
	if f.Origin != nil {
		f.Found = true
		f.Stage = f.Origin.Stage
		f.Step = f.Origin.Step
	}
	f.WarningCount = len(r.Warnings)
	if n := min(len(r.Warnings), 50); n > 0 {
		f.Warnings = append([]Warning{}, r.Warnings[:n]...)
	}
	return f
}

func summaries(r *Run) []KindSummary {
	out := []KindSummary{}
	for k := kind(0); k < numKinds; k++ {
		s := KindSummary{Kind: k.String(), Ranks: []int{}, FirstStep: -1}
		var steps rangeSet
		for _, rs := range r.ranks {
			tr := &rs.tracks[k]
			if tr.steps.empty() {
				continue
			}
			steps.union(&tr.steps)
			s.Ranks = append(s.Ranks, rs.rank)
			s.Records += tr.records
			s.AnomalousRows += tr.anomalous
			if tr.strong.ok && (s.FirstStep < 0 || tr.strong.step < s.FirstStep) {
				s.FirstStep = tr.strong.step
			}
		}
		if steps.empty() {
			continue
		}
		s.Steps = steps.String()
		out = append(out, s)
	}
	return out
}

func (t *track) pick(weak bool) *first {
	if weak {
		return &t.weak
	}
	return &t.strong
}

// firstStep is the first step of kind k with a strong anomaly on any rank,
// or, when there is none, with a weak one.
func firstStep(r *Run, ks ...kind) (step int, weak, ok bool) {
	for _, weak := range []bool{false, true} {
		step, ok = -1, false
		for _, rs := range r.ranks {
			for _, k := range ks {
				fp := rs.tracks[k].pick(weak)
				if fp.ok && (!ok || fp.step < step) {
					step, ok = fp.step, true
				}
			}
		}
		if ok {
			return step, weak, true
		}
	}
	return -1, false, false
}

func born(fp *first) string {
	switch fp.row.Side {
	case "in":
		return BornInputsAnomalous
	case "out":
		switch {
		case fp.inBad:
			return BornInputsAnomalous
		case fp.inSeen == 0:
			return BornInputsNotRecorded
		}
		return BornHere
	}
	return BornUnknown
}

var bornRank = map[string]int{BornHere: 0, BornInputsNotRecorded: 1, BornUnknown: 2, BornInputsAnomalous: 3}

// activations analyses one pass (actv or actv_grad).
func activations(r *Run, k kind) *Activations {
	S, weak, ok := firstStep(r, k)
	if !ok {
		return nil
	}
	a := &Activations{Source: k.String(), Step: S, Weak: weak, RanksAnomalous: []int{}, RanksClean: []int{}, PerRank: []RankFirst{}}
	if !weak {
		if ws, ok := weakStep(r, k); ok && ws < S {
			a.EarlierWeakStep = &ws
		}
	}
	var best *first
	for _, rs := range r.ranks {
		tr := &rs.tracks[k]
		fp := tr.pick(weak)
		switch {
		case fp.ok && fp.step == S:
			a.RanksAnomalous = append(a.RanksAnomalous, rs.rank)
			b := born(fp)
			a.PerRank = append(a.PerRank, RankFirst{Rank: rs.rank, AnomalousRows: fp.count, Born: b, First: fp.row})
			if best == nil || earlierOrigin(fp, best) {
				best = fp
			}
		case tr.steps.contains(S):
			a.RanksClean = append(a.RanksClean, rs.rank)
		default:
			a.RanksNotRecorded = append(a.RanksNotRecorded, rs.rank)
		}
	}
	a.First = best.row
	a.OriginRank = best.row.Rank
	a.Born = born(best)
	return a
}

// earlierOrigin prefers a row born in its module, then the earlier call,
// then the lower rank.
func earlierOrigin(a, b *first) bool {
	ra, rb := bornRank[born(a)], bornRank[born(b)]
	if ra != rb {
		return ra < rb
	}
	if a.key != b.key {
		return a.key.less(b.key)
	}
	return a.row.Rank < b.row.Rank
}

func weakStep(r *Run, k kind) (int, bool) {
	step, ok := -1, false
	for _, rs := range r.ranks {
		fp := &rs.tracks[k].weak
		if fp.ok && (!ok || fp.step < step) {
			step, ok = fp.step, true
		}
	}
	return step, ok
}

func groupOf(groups [][]int, rank int) []int {
	for _, g := range groups {
		if slices.Contains(g, rank) {
			out := append([]int{}, g...)
			sort.Ints(out)
			return out
		}
	}
	return nil
}

// partners compares the origin tensor across ranks.
func partners(a *Activations, p *probe, groups [][]int) *Partners {
	if p == nil {
		return nil
	}
	out := &Partners{Compared: []int{}, Anomalous: []int{}, Clean: []int{}, SameKind: true}
	origin := a.OriginRank
	group := groupOf(groups, origin)
	if group != nil {
		out.GroupsKnown = true
		out.Group = group
	}
	var ranks []int
	for rk := range p.hits {
		ranks = append(ranks, rk)
	}
	sort.Ints(ranks)
	for _, rk := range ranks {
		h := p.hits[rk]
		if group != nil && !slices.Contains(group, rk) {
			continue
		}
		out.Compared = append(out.Compared, rk)
		if h.anomalous {
			out.Anomalous = append(out.Anomalous, rk)
			if h.kind != a.First.Kind {
				out.SameKind = false
			}
		} else {
			out.Clean = append(out.Clean, rk)
		}
	}
	for _, rk := range group {
		if _, ok := p.hits[rk]; !ok {
			out.Missing = append(out.Missing, rk)
		}
	}
	others, othersBad := 0, 0
	for _, rk := range out.Compared {
		if rk == origin {
			continue
		}
		others++
		if slices.Contains(out.Anomalous, rk) {
			othersBad++
		}
	}
	tensor := a.First.Name
	if a.First.Tensor != "" {
		tensor += " " + a.First.Tensor
	}
	scope := "every rank that recorded it (tensor-parallel groups unknown)"
	if out.GroupsKnown {
		scope = fmt.Sprintf("its tensor-parallel group %s", ranksText(group))
	}
	switch {
	case others == 0:
		out.Verdict = PartnersNone
		out.Reason = fmt.Sprintf("no other rank in %s recorded %s at step %d", scope, tensor, a.Step)
	case othersBad == others:
		out.Verdict = PartnersShared
		out.Reason = fmt.Sprintf("%s is anomalous on all %d ranks compared (%s)", tensor, len(out.Compared), scope)
		if a.Born == BornHere {
			out.Reason += ": a collective inside the module or data shared by the group carried it, not one rank's compute"
		}
	case othersBad == 0:
		out.Verdict = PartnersLocal
		out.Reason = fmt.Sprintf("%s is anomalous only on rank %d and clean on %s (%s)", tensor, origin, ranksText(out.Clean), scope)
		if a.Born == BornHere {
			out.Reason += fmt.Sprintf(": rank %d's own compute", origin)
		} else {
			out.Reason += fmt.Sprintf(": confined to rank %d", origin)
		}
	default:
		out.Verdict = PartnersPartial
		out.Reason = fmt.Sprintf("%s is anomalous on %s and clean on %s (%s)", tensor, ranksText(out.Anomalous), ranksText(out.Clean), scope)
	}
	return out
}

func anomalousRanks(p *probe) []int {
	out := []int{}
	for rk, h := range p.hits {
		if h.anomalous {
			out = append(out, rk)
		}
	}
	sort.Ints(out)
	return out
}

func activationReason(a *Activations, pass string) string {
	r := a.First
	what := r.Name
	if r.Tensor != "" {
		what += " " + r.Tensor
	}
	at := fmt.Sprintf("step %d", a.Step)
	if r.MicroStep >= 0 {
		at += fmt.Sprintf(", micro-step %d", r.MicroStep)
	}
	var s string
	switch a.Born {
	case BornHere:
		s = fmt.Sprintf("%s: rank %d, %s became %s at %s while the inputs of the call were finite", pass, r.Rank, what, r.Kind, at)
	case BornInputsAnomalous:
		s = fmt.Sprintf("%s: rank %d, %s is %s at %s, its inputs were already anomalous: it came from an unmonitored computation or another rank", pass, r.Rank, what, r.Kind, at)
	case BornInputsNotRecorded:
		s = fmt.Sprintf("%s: rank %d, %s is %s at %s (no input recorded for the call)", pass, r.Rank, what, r.Kind, at)
	default:
		s = fmt.Sprintf("%s: rank %d, %s is %s at %s", pass, r.Rank, what, r.Kind, at)
	}
	s += fmt.Sprintf("; anomalous on %s, clean on %s", ranksText(a.RanksAnomalous), ranksText(a.RanksClean))
	if len(a.RanksNotRecorded) > 0 {
		s += fmt.Sprintf(", not recorded on %s", ranksText(a.RanksNotRecorded))
	}
	if a.Weak {
		s += " (weak: only an infinite norm or an unexplained nan statistic)"
	}
	return s
}

// gradSide describes one side of the reduction at step S.
func gradSide(r *Run, k kind, S int, weak bool) *GradSide {
	g := &GradSide{Source: k.String(), RanksAnomalous: []int{}, RanksClean: []int{}}
	var best *first
	for _, rs := range r.ranks {
		tr := &rs.tracks[k]
		fp := tr.pick(weak)
		switch {
		case fp.ok && fp.step == S:
			g.Recorded = true
			g.RanksAnomalous = append(g.RanksAnomalous, rs.rank)
			g.AnomalousRows += fp.count
			if best == nil || fp.key.less(best.key) || (fp.key == best.key && fp.row.Rank < best.row.Rank) {
				best = fp
			}
		case tr.steps.contains(S):
			g.Recorded = true
			g.RanksClean = append(g.RanksClean, rs.rank)
		default:
			g.RanksNotRecorded = append(g.RanksNotRecorded, rs.rank)
		}
	}
	if best != nil {
		row := best.row
		g.First = &row
	}
	return g
}

func gradients(r *Run) *Gradients {
	S, weak, ok := firstStep(r, kGradUnreduced, kGradReduced)
	if !ok {
		return nil
	}
	g := &Gradients{Step: S, Weak: weak}
	g.Before = gradSide(r, kGradUnreduced, S, weak)
	g.After = gradSide(r, kGradReduced, S, weak)
	switch {
	case len(g.Before.RanksAnomalous) > 0:
		g.Where = GradBeforeReduction
		g.Reason = fmt.Sprintf("step %d: local gradients (before the data-parallel reduction) are anomalous on %s: the source ranks; first parameter %s", S, ranksText(g.Before.RanksAnomalous), g.Before.First.Name)
	default:
		g.Where = GradAfterReduction
		for _, rk := range g.After.RanksAnomalous {
			if slices.Contains(g.Before.RanksNotRecorded, rk) {
				g.Where = GradAfterReductionUnverified
			}
		}
		if g.Where == GradAfterReduction {
			g.Reason = fmt.Sprintf("step %d: reduced gradients are anomalous on %s while the unreduced gradients were clean on every rank: the aggregation (communication) produced it; first parameter %s", S, ranksText(g.After.RanksAnomalous), g.After.First.Name)
		} else {
			g.Reason = fmt.Sprintf("step %d: reduced gradients are anomalous on %s; unreduced gradients were not recorded there, so the source is unknown; first parameter %s", S, ranksText(g.After.RanksAnomalous), g.After.First.Name)
		}
	}
	if weak {
		g.Reason += " (weak: only an infinite norm or an unexplained nan statistic)"
	}
	return g
}

// optSide is the first anomalous row among kinds ks; shift is how many
// steps before the recorded step the optimizer wrote it.
func optSide(r *Run, weak bool, shift int, ks ...kind) *OptSide {
	var best *first
	bestKind := kind(0)
	for _, rs := range r.ranks {
		for _, k := range ks {
			fp := rs.tracks[k].pick(weak)
			if !fp.ok {
				continue
			}
			if best == nil || fp.step < best.step || (fp.step == best.step && (k < bestKind || (k == bestKind && (fp.key.less(best.key) || (fp.key == best.key && fp.row.Rank < best.row.Rank))))) {
				best, bestKind = fp, k
			}
		}
	}
	if best == nil {
		return nil
	}
	s := &OptSide{Source: bestKind.String(), RecordedStep: best.step, WrittenByStep: best.step - shift, First: best.row, Weak: weak, RanksAnomalous: []int{}}
	for _, rs := range r.ranks {
		for _, k := range ks {
			if fp := rs.tracks[k].pick(weak); fp.ok && fp.step == best.step {
				s.RanksAnomalous = append(s.RanksAnomalous, rs.rank)
				break
			}
		}
	}
	return s
}

func optimizer(r *Run) *Optimizer {
	var state, updated, origin *OptSide
	weak := false
	for _, w := range []bool{false, true} {
		state = optSide(r, w, 1, kExpAvg, kExpAvgSq)
		updated = optSide(r, w, 0, kParamUpdated)
		origin = optSide(r, w, 1, kParamOrigin)
		weak = w
		if state != nil || updated != nil || origin != nil {
			break
		}
	}
	if state == nil && updated == nil && origin == nil {
		return nil
	}
	o := &Optimizer{State: state, Updated: updated, Origin: origin, Weak: weak}
	F, have := 0, false
	for _, s := range []*OptSide{state, updated} {
		if s != nil && (!have || s.WrittenByStep < F) {
			F, have = s.WrittenByStep, true
		}
	}
	if origin != nil && (!have || origin.WrittenByStep < F) {
		F = origin.WrittenByStep
		// The weights entered step origin.RecordedStep anomalous: were they
		// recorded clean after the previous optimizer.step?
		cleanBefore := true
		for _, rk := range origin.RanksAnomalous {
			rs := r.rank(rk)
			tr := &rs.tracks[kParamUpdated]
			if !tr.steps.contains(F) || (tr.strong.ok && tr.strong.step <= F) {
				cleanBefore = false
			}
		}
		if cleanBefore {
			o.Step = F
			o.Verdict = OptimizerBetweenSteps
			o.Reason = fmt.Sprintf("weights entered step %d anomalous on %s (param_origin) although param_updated of step %d was clean: they changed outside optimizer.step (loading, broadcast, in-place edit)", origin.RecordedStep, ranksText(origin.RanksAnomalous), F)
			return o
		}
	}
	o.Step = F
	recorded, bad := false, false
	for _, rs := range r.ranks {
		for _, k := range []kind{kGradUnreduced, kGradReduced} {
			tr := &rs.tracks[k]
			if tr.steps.contains(F) {
				recorded = true
			}
			if tr.strong.ok && tr.strong.step <= F {
				bad = true
			}
		}
	}
	o.GradientsRecorded = recorded
	o.GradientsClean = recorded && !bad
	what := optWhat(state, updated, origin, F)
	switch {
	case bad:
		o.Verdict = OptimizerFromGradients
		o.Reason = fmt.Sprintf("%s; the gradients of step %d or earlier were already anomalous", what, F)
	case !recorded:
		o.Verdict = OptimizerGradientsNotRecorded
		o.Reason = fmt.Sprintf("%s; no gradient was recorded at step %d, so the optimizer cannot be told apart from its input", what, F)
	default:
		o.Verdict = OptimizerFault
		o.Reason = fmt.Sprintf("%s while the gradients of step %d were recorded clean on every rank: the optimizer step produced it", what, F)
	}
	if weak {
		o.Reason += " (weak: only an infinite norm or an unexplained nan statistic)"
	}
	return o
}

func optWhat(state, updated, origin *OptSide, F int) string {
	var parts []string
	for _, s := range []*OptSide{state, updated, origin} {
		if s != nil && s.WrittenByStep == F {
			parts = append(parts, fmt.Sprintf("%s %s (recorded at step %d on %s)", s.Source, s.First.Name, s.RecordedStep, ranksText(s.RanksAnomalous)))
		}
	}
	return fmt.Sprintf("optimizer.step of step %d wrote non-finite %s", F, strings.Join(parts, " and "))
}

func (r *Run) rank(rk int) *rankState {
	for _, rs := range r.ranks {
		if rs.rank == rk {
			return rs
		}
	}
	return newRankState(rk, nil)
}

// candidate is one section's evidence with its order.
type candidate struct {
	step, micro, stage, vpp, call int
	weak                          bool
	origin                        Origin
}

func (a candidate) less(b candidate) bool {
	for _, d := range [...][2]int{{a.step, b.step}, {a.micro, b.micro}, {a.stage, b.stage}, {a.vpp, b.vpp}, {a.call, b.call}} {
		if d[0] != d[1] {
			return d[0] < d[1]
		}
	}
	return false
}

const (
	microEnd       = 1 << 29 // after every micro-step: reduced gradients
	microOptimizer = 1 << 30 // optimizer.step runs after the whole step
)

// pickOrigin orders the sections' evidence like msprobe's anomaly analyser
// (step, micro-step, stage, virtual stage, call) and keeps the earliest,
// preferring strong evidence to weak.
func pickOrigin(f *Findings) *Origin {
	var cs []candidate
	for _, a := range []*Activations{f.Forward, f.Backward} {
		if a == nil {
			continue
		}
		stage, src, k := 0, "forward", kActv
		if a.Source == KindActvGrad {
			stage, src, k = 1, "backward", kActvGrad
		}
		st := StageForward
		if stage == 1 {
			st = StageBackward
		}
		cs = append(cs, candidate{step: a.Step, micro: max(a.First.MicroStep, 0), stage: stage, vpp: vppKey(k, a.First.VppStage), call: a.First.Call, weak: a.Weak,
			origin: Origin{Stage: st, Step: a.Step, Source: src, Row: a.First, Ranks: []int{a.OriginRank}, Reason: a.Reason, Weak: a.Weak}})
	}
	if g := f.Gradients; g != nil {
		side := g.Before
		if g.Where != GradBeforeReduction {
			side = g.After
		}
		micro := microEnd
		if side.First.MicroStep >= 0 {
			micro = side.First.MicroStep
		}
		cs = append(cs, candidate{step: g.Step, micro: micro, stage: 1, vpp: vppKey(kGradUnreduced, side.First.VppStage), call: side.First.Call, weak: g.Weak,
			origin: Origin{Stage: StageBackward, Step: g.Step, Source: "gradients", Row: *side.First, Ranks: side.RanksAnomalous, Reason: g.Reason, Weak: g.Weak}})
	}
	if o := f.Optimizer; o != nil {
		var side *OptSide
		for _, s := range []*OptSide{o.State, o.Updated, o.Origin} {
			if s != nil && s.WrittenByStep == o.Step && side == nil {
				side = s
			}
		}
		if side == nil {
			side = o.Origin
		}
		cs = append(cs, candidate{step: o.Step, micro: microOptimizer, stage: 2, call: side.First.Call, weak: o.Weak,
			origin: Origin{Stage: StageOptimizer, Step: o.Step, Source: "optimizer", Row: side.First, Ranks: side.RanksAnomalous, Reason: o.Reason, Weak: o.Weak}})
	}
	var best *candidate
	for i := range cs {
		c := &cs[i]
		if best == nil || (best.weak && !c.weak) || (best.weak == c.weak && c.less(*best)) {
			best = c
		}
	}
	if best == nil {
		return nil
	}
	o := best.origin
	return &o
}

// ranksText writes ranks like "0-3,6".
func ranksText(ranks []int) string {
	if len(ranks) == 0 {
		return "no rank"
	}
	s := append([]int{}, ranks...)
	sort.Ints(s)
	var rs rangeSet
	for _, r := range s {
		rs.add(r)
	}
	pre := "ranks "
	if len(s) == 1 {
		pre = "rank "
	}
	return pre + rs.String()
}
