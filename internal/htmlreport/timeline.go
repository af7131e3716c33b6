package htmlreport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/nanhunt/nanhunt/internal/entryat"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/safeio"

	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/trace"
)

// Timeline is the origin rank's calls around the root op, in execution
// order: the last clean calls before it, the root op, the calls that carried
// an Inf until it became NaN, and the first collective after it.
type Timeline struct {
	// From is "dump" when the calls were read from dump.json, "verdict"
	// when only the verdict's own record of them was at hand.
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

// Bounds of the timeline read from a dump.
const (
	cleanCalls     = 4     // clean calls shown before the root op
	ringCalls      = 16    // calls remembered before the root op, to find the clean ones
	chainCalls     = 6     // non-finite calls shown between the root op and the first NaN
	maxTensors     = 8     // tensors shown per side of a call
	maxCallsAfter  = 50000 // calls read after the root op looking for the first NaN and collective
	readWindowSize = 256 << 10
)

// buildTimeline reads the timeline from the dump when a path is given, and
// falls back on the verdict when it cannot.
func buildTimeline(v *verdict.Verdict, dumpPath string) *Timeline {
	o := v.Origin
	if !v.Anomaly || o == nil {
		return nil
	}
	rank := -1
	if len(o.Ranks) > 0 {
		rank = o.Ranks[0]
	}
	var warnings []string
	if dumpPath != "" && rank >= 0 {
		tl, err := readTimeline(v, dumpPath, rank)
		if err == nil {
			return tl
		}
		warnings = append(warnings, err.Error()+"; the timeline below is the verdict's own record")
	}
	tl := verdictTimeline(v, rank)
	tl.Warnings = append(warnings, tl.Warnings...)
	return tl
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
		c.Dir = dump.ParseName(c.Op).Dir.String()
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
	case !o.Captured:
		return "first call that shows it (it already had it in its inputs)"
	}
	return "origin: finite inputs, " + kindName(o.Kind) + " out"
}

func holdsOf(ts []verdict.TensorStat) string {
	if len(ts) == 0 {
		return ""
	}
	var c dump.Class
	known := false
	for _, t := range ts {
		switch t.Holds {
		case "unknown":
			continue
		case "finite":
		default:
			for _, k := range []struct {
				s string
				c dump.Class
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

// pos is where an entry sits in dump.json.
type pos struct {
	index       int
	offset, end int64
}

// readTimeline streams the origin rank's dump.json of the origin step: the
// entries before the root op are skipped unparsed, the last few are read
// again for their statistics, and reading stops at the first collective
// after the root op (and the first NaN, when the root op made an Inf).
func readTimeline(v *verdict.Verdict, dumpPath string, rank int) (*Timeline, error) {
	o := v.Origin
	layout, err := dump.Discover(dumpPath)
	if err != nil {
		return nil, fmt.Errorf("origin timeline: %w", err)
	}
	var rd *dump.RankDir
	for i, d := range layout.Dirs {
		if d.Mode == v.Scanned.Mode && d.Step == o.Step && d.Rank == rank {
			rd = &layout.Dirs[i]
			break
		}
	}
	if rd == nil || rd.Dump == "" {
		return nil, fmt.Errorf("origin timeline: no dump.json of step %d, rank %d under %s", o.Step, rank, dumpPath)
	}
	f, err := safeio.Open(rd.Dump)
	if err != nil {
		return nil, fmt.Errorf("origin timeline: %w", err)
	}
	defer f.Close()

	tl := &Timeline{From: "dump", File: rd.Dump, Step: o.Step, Rank: rank}
	found := false
	r := dump.NewReader(f, dump.ReaderOptions{Details: true, WindowSize: readWindowSize,
		Select: func(name string, _ int64) bool { return found || name == o.Op }})
	var ring []pos
	wantNaN := v.FirstNaN != nil && v.FirstNaN.Rank == rank && v.FirstNaN.Step == o.Step
	carrier := ""
	if c := v.Carrier; c != nil && slices.Contains(c.FromRanks, rank) {
		carrier = c.Op
	}
	chain, after := 0, 0
	gotNaN, gotColl := !wantNaN, false
	add := func(e *dump.Entry, role, note string) {
		tl.Calls = append(tl.Calls, callOf(e, role, note))
	}
	for r.Next() {
		e := r.Entry()
		if !found {
			if e.Skipped {
				if len(ring) == ringCalls {
					ring = ring[1:]
				}
				ring = append(ring, pos{e.Index, e.Offset, e.End})
				continue
			}
			found = true
			// the ring is read again through its own reader, so e stays valid
			tl.Calls = append(tl.Calls, cleanBefore(f, ring)...)
			add(e, "root", rootNote(o))
			if dump.ParseName(e.Name).IsDistributed() {
				gotColl = true
			}
			continue
		}
		after++
		out := outputClass(e)
		switch {
		case wantNaN && !gotNaN && e.Name == v.FirstNaN.Op:
			gotNaN = true
			add(e, "first_nan", "the Inf became NaN here")
		case dump.ParseName(e.Name).IsDistributed() && !gotColl:
			gotColl = true
			if e.Name == carrier {
				add(e, "carrier", "carried it to "+rankWord(v.Carrier.ToRanks))
			} else {
				add(e, "collective", "first collective after the origin")
			}
		case wantNaN && !gotNaN && out != 0 && chain < chainCalls:
			chain++
			add(e, "chain", "holds "+out.String())
		}
		if (gotNaN && gotColl) || after >= maxCallsAfter {
			break
		}
	}
	var fe *dump.FormatError
	switch err := r.Err(); {
	case errors.As(err, &fe):
		tl.Warnings = append(tl.Warnings, fmt.Sprintf("%s is damaged at %s; the calls before the damage are shown", rd.Dump, fe.Error()))
	case err != nil:
		tl.Warnings = append(tl.Warnings, fmt.Sprintf("%s: %v", rd.Dump, err))
	}
	if !found {
		if r.Err() != nil {
			return nil, fmt.Errorf("origin timeline: %s ends before %s (%v)", rd.Dump, o.Op, r.Err())
		}
		return nil, fmt.Errorf("origin timeline: %s holds no entry %s", rd.Dump, o.Op)
	}
	indices := make([]int, 0, len(tl.Calls))
	for i := range tl.Calls {
		tl.Calls[i].Gap = tl.Calls[i].Index
		if i > 0 {
			tl.Calls[i].Gap = tl.Calls[i].Index - tl.Calls[i-1].Index - 1
		}
		indices = append(indices, tl.Calls[i].Index)
	}
	// the phases by the analysis's own model (the name's direction is not
	// the phase: a kernel a backward calls is named ….forward)
	phases, perr := trace.PhasesOf(context.Background(), *rd, indices)
	for i := range tl.Calls {
		if ph, ok := phases[tl.Calls[i].Index]; ok {
			tl.Calls[i].Phase = ph.String()
		}
	}
	if perr != nil && phases == nil {
		tl.Warnings = append(tl.Warnings, fmt.Sprintf("the phases of the calls could not be read: %v", perr))
	}
	if !gotColl && r.Err() == nil {
		tl.Warnings = append(tl.Warnings, fmt.Sprintf("no collective after %s in %d calls read", o.Op, after))
	}
	return tl, nil
}

// cleanBefore reads the remembered entries before the root op again and
// keeps the last ones whose outputs are finite.
func cleanBefore(f *os.File, ring []pos) []Call {
	x := entryat.New(dump.ReaderOptions{Details: true})
	var out []Call
	for i := len(ring) - 1; i >= 0 && len(out) < cleanCalls; i-- {
		p := ring[i]
		e, err := x.Read(f, p.offset, p.end)
		if err != nil {
			continue
		}
		e.Index = p.index
		if outputClass(e) != 0 {
			continue
		}
		out = append(out, callOf(e, "clean", "finite outputs"))
	}
	slices.Reverse(out)
	return out
}

// outputClass is what the outputs of an entry hold.
func outputClass(e *dump.Entry) dump.Class {
	var c dump.Class
	for i := range e.Tensors {
		t := &e.Tensors[i]
		if t.Field == dump.Output || t.Field == dump.ParamGrads {
			c |= policy.Holds(t)
		}
	}
	return c
}

// callOf turns an entry into a timeline call, with at most maxTensors
// tensors per side.
func callOf(e *dump.Entry, role, note string) Call {
	c := Call{Index: e.Index, Op: e.Name, Role: role, Note: note, Dir: dump.ParseName(e.Name).Dir.String(),
		Inputs: []verdict.TensorStat{}, Outputs: []verdict.TensorStat{}}
	var out dump.Class
	hasOut := false
	for i := range e.Tensors {
		t := &e.Tensors[i]
		ts := trace.TensorStatOf(t)
		isOut := t.Field == dump.Output || t.Field == dump.ParamGrads
		if isOut {
			out |= policy.Holds(t)
			hasOut = true
		}
		switch {
		case isOut && len(c.Outputs) < maxTensors:
			c.Outputs = append(c.Outputs, ts)
		case !isOut && len(c.Inputs) < maxTensors:
			c.Inputs = append(c.Inputs, ts)
		default:
			c.More++
		}
	}
	if hasOut {
		c.Holds = out.String()
	}
	return c
}
