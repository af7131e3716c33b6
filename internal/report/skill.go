package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/verdict"
)

// SkillSchema names the output of "nanhunt trace --format skill".
const SkillSchema = "nanhunt/skill/v1"

// SkillOutput is a verdict in the shapes the two scripts of the
// nan-overflow-detection skill wrote, under one object: CrossRank is what
// cross_rank_analyzer.py wrote to cross_rank_analysis.json, SingleRank what
// single_rank_tracer.py wrote for the source rank, with the field names
// both used; the other members are nanhunt's.
type SkillOutput struct {
	Schema  string `json:"schema"`
	Anomaly bool   `json:"anomaly"`
	// Complete and Unread are the verdict's: false, and the rank-steps
	// that could not be read whole, when "no anomaly" covers less than
	// was expected (exit status 3).
	Complete   bool                  `json:"complete"`
	Unread     []verdict.UnreadRanks `json:"unread"`
	Step       *int                  `json:"step"`       // the origin step; null without an origin
	Confidence string                `json:"confidence"` // high, medium, low; "" without an origin
	CrossRank  CrossRankOps          `json:"cross_rank_analysis"`
	SingleRank *SingleRankTrace      `json:"single_rank_trace"` // null without an origin
	// Notes say in words what the two results cannot: an origin that is
	// not in the dump, a tie, ranks reached outside the collectives.
	Notes []string `json:"notes"`
}

// CrossRankOp is one collective that carried the anomaly: the ranks that
// sent it (source), the ranks it made non-finite (propagated), and the
// other participants of the call (normal).
type CrossRankOp struct {
	Op              string `json:"-"` // the key: the entry name on the (first) sending rank
	SourceRanks     []int  `json:"source_ranks"`
	PropagatedRanks []int  `json:"propagated_ranks"`
	NormalRanks     []int  `json:"normal_ranks"`
	TotalRanks      int    `json:"total_ranks"`
	Step            int    `json:"step"`
	// UnreadRanks are participants whose side of the call was not read.
	UnreadRanks []int `json:"unread_ranks"`
}

// CrossRankOps is cross_rank_analysis: one member per collective, keyed by
// its entry name, in the order the anomaly travelled.
type CrossRankOps []CrossRankOp

// MarshalJSON writes the collectives as one object, in their order.
func (ops CrossRankOps) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, op := range ops {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(op.Op)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(op)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// SingleRankTrace is the origin's call on one rank.
type SingleRankTrace struct {
	Rank         int          `json:"rank"`
	FirstAnomaly FirstAnomaly `json:"first_anomaly"`
}

// FirstAnomaly is the call that made the value (or, not captured, the
// first that shows it).
type FirstAnomaly struct {
	OpName    string `json:"op_name"`
	ExecOrder *int   `json:"exec_order"` // position in dump.json from 0; null when the verdict does not say
	// Output holds the call's outputs as msprobe names the statistics.
	Output       []SkillTensor `json:"output"`
	OutputHasNaN bool          `json:"output_has_nan"`
	InputHasNaN  bool          `json:"input_has_nan"`
	InputInfo    []SkillTensor `json:"input_info"`
	// ConstructChain is the call, then its parent module calls, innermost
	// first.
	ConstructChain []string `json:"construct_chain"`
	// StackInfo is the user's line that made the call: [function, file,
	// line]; empty when stack.json does not tell.
	StackInfo []any `json:"stack_info"`
	// Captured: its inputs are clean, so the value was made here.
	Captured bool   `json:"captured"`
	Kind     string `json:"kind"`  // nan, inf or overflow, as origin.kind
	Stage    string `json:"stage"` // forward, backward or optimizer
}

// SkillTensor is one tensor of the call, with msprobe's keys.
type SkillTensor struct {
	Slot  string         `json:"slot"`
	Dtype string         `json:"dtype"`
	Shape []int          `json:"shape"`
	Max   verdict.Number `json:"Max"`
	Min   verdict.Number `json:"Min"`
	Mean  verdict.Number `json:"Mean"`
	Norm  verdict.Number `json:"Norm"`
	Holds string         `json:"holds"`
}

// Skill writes the verdict as SkillOf gives it, indented JSON.
func Skill(w io.Writer, v *verdict.Verdict) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(SkillOf(v))
}

// SkillOf puts a verdict in the skill's shapes.
func SkillOf(v *verdict.Verdict) SkillOutput {
	out := SkillOutput{Schema: SkillSchema, Anomaly: v.Anomaly, Complete: v.Complete, Unread: v.Unread, CrossRank: CrossRankOps{}, Notes: []string{}}
	if out.Unread == nil {
		out.Unread = []verdict.UnreadRanks{}
	}
	o := v.Origin
	if o == nil {
		switch {
		case v.Anomaly && v.Scanned.Files > 0:
			out.Notes = append(out.Notes, "the dump holds no NaN/Inf, but the training log or the monitor shows one the dump does not cover; "+
				"nanhunt plan writes the msprobe config.json that dumps the steps and ranks they point at")
		case v.Anomaly:
			out.Notes = append(out.Notes, "no dump was analysed: the NaN/Inf comes from the training log or the monitor; "+
				"nanhunt plan writes the msprobe config.json that dumps the steps and ranks they point at")
		case !v.Complete:
			out.Notes = append(out.Notes, fmt.Sprintf("no NaN/Inf in what could be read, but %s: this is not a clean run (exit status 3)", NotRead(v, "could not be read whole")))
		default:
			out.Notes = append(out.Notes, "no NaN/Inf in any step and rank expected: every one was read whole")
		}
		out.Notes = append(out.Notes, aheadNotes(v)...)
		return out
	}
	step := o.Step
	out.Step, out.Confidence = &step, o.Confidence
	out.CrossRank = crossRank(v)
	rank, index := originRank(v)
	out.SingleRank = &SingleRankTrace{Rank: rank, FirstAnomaly: firstAnomaly(o, index)}
	out.Notes = append(skillNotes(v, rank), aheadNotes(v)...)
	return out
}

// aheadNotes are the warnings before the NaN, one note each.
func aheadNotes(v *verdict.Verdict) []string {
	var out []string
	for i, a := range v.Ahead {
		if i == maxAhead {
			out = append(out, fmt.Sprintf("heading for overflow: %d more (see nanhunt trace --format json)", len(v.Ahead)-i))
			break
		}
		out = append(out, "heading for overflow: "+a.Text)
	}
	return out
}

// originRank is the rank whose root is the origin's op (the lowest, a
// source before a receiver) and the op's position in its dump.json.
func originRank(v *verdict.Verdict) (int, *int) {
	o := v.Origin
	best, index := -1, 0
	pick := func(rank, i int) {
		if best < 0 || rank < best {
			best, index = rank, i
		}
	}
	for _, role := range []string{"source", ""} {
		for _, s := range v.Steps {
			if s.Step != o.Step || s.Status != "anomaly" {
				continue
			}
			for _, a := range s.Anomalous {
				if a.Op == o.Op && (role == "" || a.Role == role) {
					pick(a.Rank, a.Index)
				}
			}
		}
		if best >= 0 {
			return best, &index
		}
	}
	for _, c := range v.Candidates {
		if c.Step == o.Step && c.Op == o.Op {
			pick(c.Rank, c.Index)
		}
	}
	if best >= 0 {
		return best, &index
	}
	if len(o.Ranks) > 0 {
		return o.Ranks[0], nil
	}
	return -1, nil
}

func firstAnomaly(o *verdict.Origin, index *int) FirstAnomaly {
	fa := FirstAnomaly{OpName: o.Op, ExecOrder: index, Captured: o.Captured, Kind: o.Kind, Stage: o.Stage,
		Output: skillTensors(o.Outputs), InputInfo: skillTensors(o.Inputs), StackInfo: []any{}}
	fa.OutputHasNaN = holdsNaN(o.Outputs)
	fa.InputHasNaN = holdsNaN(o.Inputs)
	fa.ConstructChain = []string{o.Op}
	for i := len(o.Chain) - 1; i >= 0; i-- {
		fa.ConstructChain = append(fa.ConstructChain, o.Chain[i])
	}
	if c := o.Code; c != nil {
		fa.StackInfo = []any{c.Func, c.File, c.Line}
	}
	return fa
}

func skillTensors(ts []verdict.TensorStat) []SkillTensor {
	out := make([]SkillTensor, 0, len(ts))
	for _, t := range ts {
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		out = append(out, SkillTensor{Slot: t.Slot, Dtype: t.Dtype, Shape: shape, Max: t.Max, Min: t.Min, Mean: t.Mean, Norm: t.Norm, Holds: t.Holds})
	}
	return out
}

func holdsNaN(ts []verdict.TensorStat) bool {
	for _, t := range ts {
		if strings.Contains(t.Holds, "nan") {
			return true
		}
	}
	return false
}

// crossRank lists every hop of the spread (carrier first) and a
// collective that made the value itself, each with its participants.
func crossRank(v *verdict.Verdict) CrossRankOps {
	ops := CrossRankOps{}
	add := func(op CrossRankOp) {
		for i := range ops {
			if ops[i].Op == op.Op && ops[i].Step == op.Step {
				ops[i] = mergeOps(ops[i], op)
				return
			}
		}
		if slices.ContainsFunc(ops, func(x CrossRankOp) bool { return x.Op == op.Op }) {
			op.Op = fmt.Sprintf("%s (step %d)", op.Op, op.Step) // the same name in another step
		}
		ops = append(ops, op)
	}
	if o := v.Origin; o.Collective {
		add(hopOp(v, verdict.Hop{Step: o.Step, Op: o.Op, FromRanks: []int{}, ToRanks: o.Ranks}))
	}
	for _, h := range v.Spread {
		add(hopOp(v, h))
	}
	return ops
}

// hopOp is one hop with its participants: its process group, or every
// rank of the step, as far as they were read or named.
func hopOp(v *verdict.Verdict, h verdict.Hop) CrossRankOp {
	from, to, unread := sortedSet(h.FromRanks), sortedSet(h.ToRanks), sortedSet(h.Unread)
	to = without(to, from)
	all := sortedSet(append(append(append(participants(v, h), from...), to...), unread...))
	return CrossRankOp{Op: h.Op, Step: h.Step, SourceRanks: from, PropagatedRanks: to,
		NormalRanks: without(without(without(all, from), to), unread), TotalRanks: len(all), UnreadRanks: unread}
}

// mergeOps joins two hops of one step that bear the same entry name (the
// calls of two groups), as a script keyed by name saw them.
func mergeOps(a, b CrossRankOp) CrossRankOp {
	all := func(x CrossRankOp) []int {
		return append(append(append(append([]int{}, x.SourceRanks...), x.PropagatedRanks...), x.NormalRanks...), x.UnreadRanks...)
	}
	every := sortedSet(append(all(a), all(b)...))
	from := sortedSet(append(append([]int{}, a.SourceRanks...), b.SourceRanks...))
	to := without(sortedSet(append(append([]int{}, a.PropagatedRanks...), b.PropagatedRanks...)), from)
	unread := without(without(sortedSet(append(append([]int{}, a.UnreadRanks...), b.UnreadRanks...)), from), to)
	return CrossRankOp{Op: a.Op, Step: a.Step, SourceRanks: from, PropagatedRanks: to,
		NormalRanks: without(without(without(every, from), to), unread), TotalRanks: len(every), UnreadRanks: unread}
}

// participants are the ranks of the hop's group (every rank of its step
// for the default group) that were read.
func participants(v *verdict.Verdict, h verdict.Hop) []int {
	group := h.Group
	if len(group) == 0 {
		for _, s := range v.Steps {
			if s.Step == h.Step {
				if set, err := notation.ParseRanges(s.Ranks); err == nil {
					for r := range set {
						group = append(group, r)
					}
				}
			}
		}
	}
	var out []int
	for _, r := range group {
		if slices.Contains(v.Scanned.Ranks, r) {
			out = append(out, r)
		}
	}
	return out
}

func sortedSet(ranks []int) []int {
	out := append([]int{}, ranks...)
	slices.Sort(out)
	return slices.Compact(out)
}

func without(ranks, drop []int) []int {
	gone := make(map[int]bool, len(drop))
	for _, r := range drop {
		gone[r] = true
	}
	out := []int{}
	for _, r := range ranks {
		if !gone[r] {
			out = append(out, r)
		}
	}
	return out
}
