package trace

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/sidefile"
	"github.com/nanhunt/nanhunt/verdict"
)

// maxP2PExplained bounds the receives the verdict explains one by one;
// the others are counted in one more explanation.
const maxP2PExplained = 8

// explain adds what a careful reader of the dump would say of the origin
// beyond the rules' fields (verdict.Explanations): a recompute, a level
// that records no collective, receives that took their send's stage. A
// hidden NaN is explained from the re-read of the origin rank (hidden.go).
func (b *builder) explain() {
	if e := b.recompute(); e != nil {
		b.v.Explanations = append(b.v.Explanations, *e)
	}
	if e := b.noCollectives(); e != nil {
		b.v.Explanations = append(b.v.Explanations, *e)
	}
	b.v.Explanations = append(b.v.Explanations, b.r.p2pExplanations()...)
}

// recompute explains an origin that is a forward call run again inside
// the backward by activation checkpointing, or the backward of one: its
// stack goes through torch/utils/checkpoint and a function named backward
// (README "How it decides", 4), or msprobe marked it is_recompute.
func (b *builder) recompute() *verdict.Explanation {
	root := b.p.root
	if root == nil || root.collIdx >= 0 || b.det == nil {
		return nil
	}
	n := dump.ParseName(root.name)
	name := root.name
	switch n.Dir {
	case notation.Backward:
		name = n.ForwardName()
	case notation.Forward:
	default:
		return nil
	}
	frames := b.det.Stacks[name]
	fr := policy.ReadFrames(frames)
	if !(fr.Checkpoint && fr.Backward) && !(name == root.name && root.recompute) {
		return nil
	}
	where := "msprobe marked it is_recompute"
	if f := checkpointFrame(frames); f != "" {
		where = "its stack goes through " + f
	}
	text := fmt.Sprintf("%s is a recompute: activation checkpointing ran this forward call again inside the backward (%s), "+
		"so its stage is backward; the checkpointed block's code made the value, run a second time.", name, where)
	if name != root.name {
		text = fmt.Sprintf("%s is the backward of %s, a recompute: activation checkpointing ran that forward call again inside "+
			"the backward (%s), and autograd differentiated the recomputed call; the fix is in the checkpointed block's code at that call.",
			root.name, name, where)
	}
	return &verdict.Explanation{Kind: verdict.ExplainRecompute, Op: name, Step: b.r.step, Text: text}
}

// checkpointFrame names the first frame in torch/utils/checkpoint:
// "torch/utils/checkpoint.py, in backward"; "" when there is none.
func checkpointFrame(frames []sidefile.Frame) string {
	for _, f := range frames {
		p := strings.ReplaceAll(f.File, "\\", "/")
		if i := strings.Index(p, "torch/utils/checkpoint"); i >= 0 {
			return fmt.Sprintf("%s, in %s", p[i:], f.Func)
		}
	}
	return ""
}

// noCollectives explains an origin without a carrier in a dump whose
// level records no collective (L0: module calls only): how the value
// reached the other ranks cannot be shown, only when, from the next
// dumped step, read whole for the carrier (README "How it decides", 7).
func (b *builder) noCollectives() *verdict.Explanation {
	s := b.r.scans[b.p.main]
	if b.v.Carrier != nil || s == nil || !strings.EqualFold(s.header.Level, "L0") {
		return nil
	}
	step := b.r.step
	text := fmt.Sprintf("The dump is of level %s, which records module calls only: no collective is in it, so how the value "+
		"reached the other ranks cannot be shown, only when.", s.header.Level)
	next := b.m.next
	switch {
	case next != nil:
		var ranks []int
		for _, rk := range next.ranks {
			if l := next.locals[rk]; l == nil || l.first == nil {
				continue
			}
			if l := b.r.locals[rk]; l != nil && l.first != nil {
				continue
			}
			ranks = append(ranks, rk)
		}
		if len(ranks) == 0 {
			text += fmt.Sprintf(" Step %d shows it on no rank that did not hold it in step %d.", next.step, step)
			break
		}
		ev := next.locals[ranks[0]].first
		how := "in its inputs"
		if ev.param != 0 {
			how = fmt.Sprintf("in its parameters: the update at the end of step %d wrote them", step)
		}
		verb := "shows"
		if len(ranks) > 1 {
			verb = "show"
		}
		text += fmt.Sprintf(" %s, without it in step %d, %s it from step %d: rank %d first at %s, %s.",
			upperFirst(rankList(ranks)), step, verb, next.step, ranks[0], ev.name, how)
	case b.m.checked != nil:
		text += fmt.Sprintf(" Step %d was read only until it showed the anomaly again.", *b.m.checked)
	default:
		text += " No later step was read to show when the other ranks got it."
	}
	return &verdict.Explanation{Kind: verdict.ExplainNoCollectives, Step: step, Text: text}
}

// p2pExplanations say which receives took the stage of their send
// (p2pstage.go), the first maxP2PExplained one by one.
func (r *stepResult) p2pExplanations() []verdict.Explanation {
	var out []verdict.Explanation
	for i, f := range r.p2p {
		if i == maxP2PExplained {
			out = append(out, verdict.Explanation{Kind: verdict.ExplainP2PStage, Step: r.step, Text: fmt.Sprintf(
				"%d more receives took the stage of the send they pair with.", len(r.p2p)-i)})
			break
		}
		what := ""
		if f.phase == policy.Backward {
			what = " (a gradient, as a pipeline's stages send them back)"
		}
		out = append(out, verdict.Explanation{Kind: verdict.ExplainP2PStage, Op: f.op, Step: r.step, Text: fmt.Sprintf(
			"%s on rank %d received what %s on rank %d sent in the %s%s: a receive takes the stage of the send it pairs with, "+
				"so its stage is %s, although its name and its place among rank %d's calls read %s.",
			f.op, f.rank, f.fromOp, f.fromRank, f.phase, what, f.phase.Stage(), f.rank, f.was)})
	}
	return out
}
