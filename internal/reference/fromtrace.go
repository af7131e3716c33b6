package reference

import (
	"github.com/nanhunt/nanhunt/verdict"
)

// FromTrace converts the fast path's verdict (what trace.Run returns) to
// the fields the rules decide. The signed kinds "+inf"/"-inf" are "inf",
// the role "seen" is "inherited" (spellings of older fast paths).
func FromTrace(v *verdict.Verdict) *Verdict {
	if v == nil {
		return nil
	}
	out := &Verdict{Anomaly: v.Anomaly, Spread: []Hop{}, Recovered: []Recovered{}, Complete: v.Complete, NotDumped: ints(v.NotDumped), Unread: []UnreadRanks{}}
	for _, u := range v.Unread {
		out.Unread = append(out.Unread, UnreadRanks{Step: u.Step, Ranks: ints(u.Ranks), Reason: u.Reason})
	}
	if o := v.Origin; o != nil {
		out.Origin = &Origin{Step: o.Step, Ranks: ints(o.Ranks), Op: o.Op, Stage: o.Stage, Phase: o.Phase, Kind: kindFromTrace(o.Kind),
			Tie: o.Tie, Captured: o.Captured, Collective: o.Collective, Unread: o.Unread, Confidence: o.Confidence}
	}
	if f := v.FirstNaN; f != nil {
		out.FirstNaN = &OpRef{Step: f.Step, Rank: f.Rank, Op: f.Op}
	}
	if c := v.Carrier; c != nil {
		h := hopFromTrace(*c)
		out.Carrier = &h
	}
	for _, h := range v.Spread {
		out.Spread = append(out.Spread, hopFromTrace(h))
	}
	sortHops(out.Spread)
	for _, r := range v.Recovered {
		out.Recovered = append(out.Recovered, Recovered{Step: r.Step, Ranks: ints(r.Ranks), Op: r.Op, Stage: r.Stage,
			Kind: kindFromTrace(r.Kind), NextStep: r.NextStep})
	}
	for _, s := range v.Steps {
		st := Step{Step: s.Step, Status: s.Status, Anomalous: []RankRole{}}
		for _, r := range s.Anomalous {
			st.Anomalous = append(st.Anomalous, RankRole{Rank: r.Rank, Role: roleFromTrace(r.Role), Kind: kindFromTrace(r.Kind),
				Op: r.Op, Stage: r.Stage, Phase: r.Phase})
		}
		out.Steps = append(out.Steps, st)
	}
	out.Ahead = []Ahead{}
	for _, a := range v.Ahead {
		if a.Source != "dump" {
			continue // the reference reads the dump only
		}
		out.Ahead = append(out.Ahead, Ahead{Op: a.Op, Tensor: a.Tensor, Stat: a.Stat, Ranks: ints(a.Ranks), Step: a.Step, StepsLeft: a.StepsLeft})
	}
	out.Scanned = Scanned{Steps: ints(v.Scanned.Steps), NotScanned: ints(v.Scanned.NotScanned)}
	if p := v.Scanned.StoppedAt; p != nil {
		x := *p
		out.Scanned.StoppedAt = &x
	}
	if p := v.Scanned.CheckedNext; p != nil {
		x := *p
		out.Scanned.CheckedNext = &x
	}
	return out
}

func hopFromTrace(h verdict.Hop) Hop {
	return Hop{Step: h.Step, Op: h.Op, FromRanks: ints(h.FromRanks), ToRanks: ints(h.ToRanks)}
}

func roleFromTrace(role string) string {
	if role == "seen" {
		return roleInherited
	}
	return role
}

func kindFromTrace(kind string) string {
	if kind == "+inf" || kind == "-inf" {
		return "inf"
	}
	return kind
}
