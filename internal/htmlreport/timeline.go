package htmlreport

import (
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/report"
	"github.com/nanhunt/nanhunt/verdict"
)

// Timeline is the origin rank's calls around the root op, in execution
// order: the last clean calls before it, the root op, the calls that carried
// an Inf until it became NaN, and the first collective after it.
type Timeline struct {
	// From is "dump" when the verdict holds the calls as dump.json has
	// them (origin.timeline), "verdict" when only its own record of the
	// root op is at hand.
	From     string   `json:"from"`
	File     string   `json:"file,omitempty"`
	Step     int      `json:"step"`
	Rank     int      `json:"rank"`
	Calls    []Call   `json:"calls"`
	Warnings []string `json:"warnings,omitempty"`
}

// Call is one call of the timeline.
type Call struct {
	Index int    `json:"index"` // position in dump.json; -1 when unknown
	Op    string `json:"op"`
	// Role is clean, root, chain (it held the Inf before the NaN), first_nan,
	// collective (the first after the root op) or carrier.
	Role  string `json:"role"`
	Note  string `json:"note"`
	Dir   string `json:"dir"`   // forward, backward, parameters_grad: what the name says
	Phase string `json:"phase"` // the phase it ran in: forward, backward, gradient reduction, optimizer
	Holds string `json:"holds"` // what its outputs hold: finite, nan, +inf, ...; "" unknown
	// Gap is the number of calls left out just before this one; -1 unknown.
	Gap     int                  `json:"gap"`
	Inputs  []verdict.TensorStat `json:"inputs"`
	Outputs []verdict.TensorStat `json:"outputs"`
	More    int                  `json:"more,omitempty"` // tensors left out
}

// buildTimeline is the page's timeline: the calls the verdict read from
// the origin rank's dump.json, or, when it holds none, its own record of
// the root op.
func buildTimeline(v *verdict.Verdict) *Timeline {
	o := v.Origin
	if !v.Anomaly || o == nil {
		return nil
	}
	rank := -1
	if len(o.Ranks) > 0 {
		rank = o.Ranks[0]
	}
	var warnings []string
	if read := o.Timeline; read != nil {
		if read.Unread == "" {
			return dumpTimeline(v, read)
		}
		warnings = append(warnings, "origin timeline: "+read.Unread+"; the timeline below is the verdict's own record")
	}
	tl := verdictTimeline(v, rank)
	tl.Warnings = append(warnings, tl.Warnings...)
	return tl
}

// dumpTimeline is the timeline the verdict read from dump.json, with each
// call's note and the calls left out before it.
func dumpTimeline(v *verdict.Verdict, read *verdict.Timeline) *Timeline {
	tl := &Timeline{From: "dump", File: string(read.File), Step: v.Origin.Step, Rank: read.Rank, Warnings: read.Warnings}
	for i, c := range read.Calls {
		gap := c.Index
		if i > 0 {
			gap = c.Index - read.Calls[i-1].Index - 1
		}
		tl.Calls = append(tl.Calls, Call{Index: c.Index, Op: c.Op, Role: c.Role, Note: callNote(v, c),
			Dir: notation.ParseName(c.Op).Dir.String(), Phase: c.Phase, Holds: c.Holds, Gap: gap,
			Inputs: c.Inputs, Outputs: c.Outputs, More: c.More})
	}
	return tl
}

// callNote says what a call read from dump.json is to the origin.
func callNote(v *verdict.Verdict, c verdict.TimelineCall) string {
	switch c.Role {
	case "clean":
		return "finite outputs"
	case "root":
		return rootNote(v.Origin)
	case "chain":
		return "holds " + c.Holds
	case "first_nan":
		return "the Inf became NaN here"
	case "carrier":
		if v.Carrier != nil {
			return "carried it to " + rankWord(v.Carrier.ToRanks)
		}
	case "collective":
		return "first collective after the origin"
	}
	return ""
}

// verdictTimeline is the timeline as far as the verdict tells it.
func verdictTimeline(v *verdict.Verdict, rank int) *Timeline {
	o := v.Origin
	tl := &Timeline{From: "verdict", Step: o.Step, Rank: rank}
	index := func(op string) int {
		for _, c := range v.Candidates {
			if c.Step == o.Step && c.Rank == rank && c.Op == op {
				return c.Index
			}
		}
		return -1
	}
	if iv := o.Interval; iv != nil && iv.After != nil {
		tl.Calls = append(tl.Calls, Call{Index: index(iv.After.Op), Op: iv.After.Op, Role: "clean",
			Note: "last call with finite outputs before it", Holds: "finite"})
	}
	root := Call{Index: index(o.Op), Op: o.Op, Role: "root", Note: rootNote(o),
		Inputs: o.Inputs, Outputs: o.Outputs, Holds: holdsOf(o.Outputs)}
	tl.Calls = append(tl.Calls, root)
	if f := v.FirstNaN; f != nil && f.Rank == rank {
		tl.Calls = append(tl.Calls, Call{Index: index(f.Op), Op: f.Op, Role: "first_nan", Note: "the Inf became NaN here", Holds: "nan"})
	}
	if c := v.Carrier; c != nil && slices.Contains(c.FromRanks, rank) {
		tl.Calls = append(tl.Calls, Call{Index: index(c.Op), Op: c.Op, Role: "carrier",
			Note: "carried it to " + rankWord(c.ToRanks)})
	}
	slices.SortStableFunc(tl.Calls, func(a, b Call) int {
		if a.Index < 0 || b.Index < 0 {
			return 0
		}
		return a.Index - b.Index
	})
	for i := range tl.Calls {
		c := &tl.Calls[i]
		c.Gap = -1
		c.Dir = notation.ParseName(c.Op).Dir.String()
		c.Phase = phaseInVerdict(v, rank, c.Op)
	}
	return tl
}

// phaseInVerdict is the phase the verdict gives a call of the rank at the
// origin step, "" when it names none.
func phaseInVerdict(v *verdict.Verdict, rank int, op string) string {
	o := v.Origin
	if op == o.Op && slices.Contains(o.Ranks, rank) {
		return o.Phase
	}
	for _, c := range v.Candidates {
		if c.Step == o.Step && c.Rank == rank && c.Op == op {
			return c.Phase
		}
	}
	for _, st := range v.Steps {
		for _, a := range st.Anomalous {
			if st.Step == o.Step && a.Rank == rank && a.Op == op {
				return a.Phase
			}
		}
	}
	return ""
}

func rootNote(o *verdict.Origin) string {
	switch {
	case o.Collective:
		return "origin: the collective itself made it from finite inputs"
	case o.Unread:
		return "first call that shows it: " + strings.TrimPrefix(report.InDump(o), "no: ")
	case !o.Captured:
		return "first call that shows it (it already had it in its inputs)"
	}
	return "origin: finite inputs, " + kindName(o.Kind) + " out"
}

func holdsOf(ts []verdict.TensorStat) string {
	if len(ts) == 0 {
		return ""
	}
	var c nonfinite.Class
	known := false
	for _, t := range ts {
		switch t.Holds {
		case "unknown":
			continue
		case "finite":
		default:
			for _, k := range []struct {
				s string
				c nonfinite.Class
			}{{"nan", nonfinite.NaN}, {"+inf", nonfinite.PosInf}, {"-inf", nonfinite.NegInf}} {
				if containsWord(t.Holds, k.s) {
					c |= k.c
				}
			}
		}
		known = true
	}
	if !known {
		return ""
	}
	return c.String()
}

func containsWord(list, w string) bool {
	for len(list) > 0 {
		i := 0
		for i < len(list) && list[i] != ',' {
			i++
		}
		if list[:i] == w {
			return true
		}
		if i == len(list) {
			break
		}
		list = list[i+1:]
	}
	return false
}
