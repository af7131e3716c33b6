package htmlreport

import (
	"fmt"
	"math"
	"slices"

	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/verdict"
)

// syntheticVerdict is a verdict of a tensor-parallel run of the given size,
// with every state the picture draws: clean steps, a step that did not
// last, ranks not dumped, a damaged file, the origin step with a carrier in
// the source's tensor-parallel group then the data-parallel all_reduces, a
// step read in part and steps left unread.
func syntheticVerdict(ranks, steps int) *verdict.Verdict {
	tp := 8
	if ranks < 16 {
		tp = 2
	}
	originStep := steps - 3
	src := ranks/2 + 5
	if src >= ranks {
		src = ranks - 1
	}
	all := make([]int, ranks)
	for i := range all {
		all[i] = i
	}
	allRanges := notation.FormatRanges(all)
	base := src / tp * tp
	var tpGroup []int
	for r := base; r < base+tp && r < ranks; r++ {
		tpGroup = append(tpGroup, r)
	}
	without := func(list []int, x int) []int {
		return slices.DeleteFunc(slices.Clone(list), func(r int) bool { return r == x })
	}
	carrier := verdict.Hop{Step: originStep, Op: "Distributed.all_reduce.3.forward", FromRanks: []int{src},
		ToRanks: without(tpGroup, src), Group: tpGroup}
	spread := []verdict.Hop{carrier}
	via := map[int]string{}
	for _, r := range carrier.ToRanks {
		via[r] = carrier.Op
	}
	for _, p := range tpGroup {
		var g []int
		for r := p % tp; r < ranks; r += tp {
			g = append(g, r)
		}
		h := verdict.Hop{Step: originStep, Op: "Distributed.all_reduce.5.forward", FromRanks: []int{p}, ToRanks: without(g, p), Group: g}
		for _, r := range h.ToRanks {
			via[r] = h.Op
		}
		spread = append(spread, h)
	}

	v := &verdict.Verdict{
		Schema:  verdict.Schema,
		Anomaly: true,
		Origin: &verdict.Origin{
			Step: originStep, Ranks: []int{src}, Op: "Torch.exp.0.forward", Stage: "forward", Kind: "inf",
			Captured: true, Confidence: "high",
			Reasons: []string{fmt.Sprintf("Torch.exp.0.forward on rank %d turned inputs without inf into outputs with inf", src)},
			Chain:   []string{"Module.module.GPTModel.forward.0", "Module.module.decoder.layers.3.TransformerLayer.forward.0", "Module.module.decoder.layers.3.mlp.MoEGate.forward.0"},
			Code:    &verdict.Frame{File: "/home/user/job/model.py", Line: 160, Func: "forward", Source: "g = torch.exp(self.gate(x))"},
			Stack: []verdict.Frame{
				{File: "/home/user/job/model.py", Line: 160, Func: "forward", Source: "g = torch.exp(self.gate(x))"},
				{File: "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", Line: 1501, Func: "_call_impl", Source: "return forward_call(*args, **kwargs)"},
				{File: "/home/user/job/train.py", Line: 143, Func: "train_step", Source: "logits = model(batch)"},
			},
			Inputs: []verdict.TensorStat{{Slot: "input_args.0", Dtype: "torch.bfloat16", Shape: []int{2, 4096, 64},
				Max: verdict.Number{Value: 120, Valid: true}, Min: verdict.Number{Value: -3.5, Valid: true},
				Mean: verdict.Number{Value: 0.01, Valid: true}, Norm: verdict.Number{Value: 812, Valid: true}, Holds: "finite"}},
			Outputs: []verdict.TensorStat{{Slot: "output.0", Dtype: "torch.bfloat16", Shape: []int{2, 4096, 64},
				Max: verdict.Number{Value: math.Inf(1), Valid: true}, Min: verdict.Number{Value: 0.03, Valid: true},
				Mean: verdict.Number{Value: math.Inf(1), Valid: true}, Norm: verdict.Number{Value: math.Inf(1), Valid: true}, Holds: "+inf"}},
		},
		FirstNaN:  &verdict.OpRef{Step: originStep, Rank: src, Op: "Tensor.__truediv__.0.forward"},
		Carrier:   &carrier,
		Spread:    spread,
		Recovered: []verdict.Recovered{},
		Suppressed: []verdict.Suppressed{{Op: "Tensor.masked_fill", Reason: "-inf written on purpose to build a mask", Values: "-inf",
			Steps: []int{0, originStep}, Ranks: all, Count: ranks * 4, Example: "Tensor.masked_fill.0.forward"}},
		Warnings:  []verdict.Warning{},
		NextSteps: []string{"Torch.exp.0.forward: exp overflows above ~88 in float32 (~11 in float16): subtract the max first, or compute in float32."},
	}
	notDumpedStep, damagedStep, recoveredStep := 1, 2, originStep/2
	for s := 0; s < steps; s++ {
		st := verdict.StepState{Step: s, Status: "clean", Ranks: allRanges, Damaged: []int{}, Anomalous: []verdict.RankState{}}
		switch {
		case s == originStep:
			st.Status = "anomaly"
			for r := 0; r < ranks; r++ {
				a := verdict.RankState{Rank: r, Role: "received", Kind: "nan", Op: via[r], Index: 700, Stage: "forward", Via: via[r]}
				if r == src {
					a = verdict.RankState{Rank: r, Role: "source", Kind: "+inf", Op: "Torch.exp.0.forward", Index: 512, Stage: "forward"}
				}
				st.Anomalous = append(st.Anomalous, a)
				role := "received"
				if r == src {
					role = "origin"
				}
				v.Candidates = append(v.Candidates, verdict.Candidate{Step: s, Rank: r, Op: a.Op, Index: a.Index, Stage: a.Stage, Kind: a.Kind, Role: role})
			}
		case s == originStep+1:
			st.Status = "checked"
			for r := 0; r < min(ranks, 3); r++ {
				st.Anomalous = append(st.Anomalous, verdict.RankState{Rank: r, Role: "seen", Kind: "nan", Op: "Functional.embedding.0.forward", Index: 1, Stage: "forward"})
			}
		case s > originStep+1:
			st.Status = "not_scanned"
		case s == recoveredStep && ranks > 3:
			st.Status = "recovered"
			st.Anomalous = []verdict.RankState{{Rank: 3, Role: "source", Kind: "+inf", Op: "Tensor.half.2.forward", Index: 90, Stage: "forward"}}
			v.Recovered = append(v.Recovered, verdict.Recovered{Step: s, Ranks: []int{3}, Op: "Tensor.half.2.forward", Stage: "forward", Kind: "inf"})
		case s == notDumpedStep && ranks > 8:
			st.Ranks = notation.FormatRanges(without(without(all, ranks-4), ranks-5))
		case s == damagedStep:
			st.Damaged = []int{ranks / 4}
			v.Warnings = append(v.Warnings, verdict.Warning{File: fmt.Sprintf("/data/run/step%d/rank%d/dump.json", s, ranks/4),
				Message: "damaged: file ends early (unexpected end of JSON input); a crash during msprobe's write leaves this"})
		}
		v.Steps = append(v.Steps, st)
	}
	stopped, checked := originStep, originStep+1
	v.Scanned = verdict.Scanned{Ranks: all, Files: ranks * (originStep + 1), Cleared: ranks * originStep, Bytes: int64(ranks) * 40 << 20,
		Entries: int64(ranks) * 3000, StoppedAt: &stopped, CheckedNext: &checked}
	for s := 0; s <= originStep; s++ {
		v.Scanned.Steps = append(v.Scanned.Steps, s)
	}
	for s := originStep + 2; s < steps; s++ {
		v.Scanned.NotScanned = append(v.Scanned.NotScanned, s)
	}
	return v
}
