package trace

import (
	"fmt"
	"slices"

	"github.com/nanhunt/nanhunt/internal/callsize"
	"github.com/nanhunt/nanhunt/internal/entryat"
	"github.com/nanhunt/nanhunt/internal/safeio"
	"github.com/nanhunt/nanhunt/internal/sidefile"

	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/notation"
)

// readEntry reads one entry again, with every detail, from its byte range.
func readEntry(file string, offset, end int64) (*dump.Entry, error) {
	f, err := safeio.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	e, err := entryat.New(dump.ReaderOptions{Details: true}).Read(f, offset, end)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return e, nil
}

// maxRows bounds the tensor rows of each side of the origin: past it, only
// rows that hold a non-finite value are kept, up to as many again.
const maxRows = 1024

// tensorStats turns an entry's tensors into report rows, inputs and outputs
// apart, and says what it left out.
func tensorStats(e *dump.Entry) (in, out []verdict.TensorStat, left int) {
	for i := range e.Tensors {
		t := &e.Tensors[i]
		side := &in
		if t.Field == dump.Output || t.Field == dump.ParamGrads {
			side = &out
		}
		if len(*side) >= maxRows && (policy.Holds(t) == 0 || len(*side) >= 2*maxRows) {
			left++
			continue
		}
		*side = append(*side, tensorStatOf(t))
	}
	return in, out, left
}

// entryWarnings says what the rows of an entry cannot show: statistics of
// a kind its tensor cannot have (a bool in a float tensor), and rows left
// out.
func entryWarnings(file string, e *dump.Entry, left int) []verdict.Warning {
	var ws []verdict.Warning
	for i := range e.Tensors {
		t := &e.Tensors[i]
		if (t.Max.Kind == dump.StatBool || t.Min.Kind == dump.StatBool) && t.Dtype != "" && t.Dtype != "torch.bool" && t.Dtype != "bool" {
			ws = append(ws, verdict.Warning{File: file, Message: fmt.Sprintf(
				"%s: the Max or Min of %s.%s is a bool in a %s tensor: NaN/Inf cannot be decided for it", e.Name, t.Field, t.Slot, t.Dtype)})
			break
		}
	}
	if left > 0 {
		ws = append(ws, verdict.Warning{File: file, Message: fmt.Sprintf(
			"%s: %d tensors are not listed (the first %d of each side are, and then only those that hold NaN/Inf)", e.Name, left, maxRows)})
	}
	return ws
}

// tensorStatOf is the report row of one tensor of an entry. It copies what
// it keeps, so the entry's buffers may be reused.
func tensorStatOf(t *dump.Tensor) verdict.TensorStat {
	ts := verdict.TensorStat{
		Slot:  t.Field.String() + "." + t.Slot,
		Dtype: t.Dtype,
		Shape: slices.Clone(t.Shape),
		Max:   num(t.Max), Min: num(t.Min), Mean: num(t.Mean), Norm: num(t.Norm),
		Holds: policy.Holds(t).String(),
	}
	if t.Field == dump.ParamGrads {
		ts.Slot = t.Slot
	}
	if !policy.Decided(t) {
		ts.Holds = "unknown"
	}
	if ts.Shape == nil {
		ts.Shape = []int{}
	}
	return ts
}

func num(s dump.Stat) verdict.Number {
	if s.Kind != dump.StatNumber && s.Kind != dump.StatBool {
		return verdict.Number{}
	}
	return verdict.Number{Value: s.Value, Valid: true}
}

// details are what a verdict shows of a rank's calls beyond its scan: the
// tensors of the calls its origin may name (the root and the first sign),
// their stacks and module chains, and the stacks of the first sign's clean
// neighbour. Trace reads them from the rank's files for the rank the
// verdict names; a summary carries them for every anomalous rank.
type details struct {
	Stacks       map[string][]sidefile.Frame `json:"stacks,omitempty"` // by entry name
	Chains       map[string][]string         `json:"chains,omitempty"` // by entry name
	Rows         map[int]*entryRows          `json:"rows,omitempty"`   // by entry index
	Warnings     []verdict.Warning           `json:"warnings,omitempty"`
	ChangedAfter string                      `json:"changed_after,omitempty"` // how dump.json changed after the scan
	// Sizes are the tensor-dump sizes of the ops of the named calls
	// (summaries only: a plan made from them sizes its follow-up dump).
	Sizes    map[string]callsize.Sizes `json:"sizes,omitempty"`
	SizesErr string                    `json:"sizes_error,omitempty"`
}

// entryRows are the tensor rows of one call, read again from its bytes.
type entryRows struct {
	Inputs   []verdict.TensorStat `json:"inputs"`
	Outputs  []verdict.TensorStat `json:"outputs"`
	Read     bool                 `json:"read"` // false: the entry could not be read again (see Warnings)
	Warnings []verdict.Warning    `json:"warnings,omitempty"`
}

// readDetails reads the details of a rank that has a first sign.
func readDetails(s *rankScan) *details {
	l := s.local
	d := &details{Stacks: map[string][]sidefile.Frame{}, Chains: map[string][]string{}, Rows: map[int]*entryRows{}}
	if l == nil || l.first == nil {
		return d
	}
	names := []string{l.root.name, l.first.name}
	if l.first.prevCleanName != "" {
		names = append(names, l.first.prevCleanName)
	}
	if n := dump.ParseName(l.root.name); n.Dir == notation.Backward {
		names = append(names, n.ForwardName()) // a recompute's stack tells it (explain.go)
	}
	rf := readSideFiles(s.dir, names)
	d.Warnings = rf.warnings
	for _, n := range names {
		if fr := rf.stackOf(n); fr != nil {
			d.Stacks[n] = fr
		}
	}
	if rf.construct != nil {
		for _, n := range names[:2] {
			if c := rf.construct.Chain(n); len(c) > 0 {
				d.Chains[n] = c
			}
		}
	}
	if s.changed == "" {
		if s.fileChanged() {
			d.ChangedAfter = s.changed
		}
		s.changed = ""
	}
	for _, ev := range []*event{l.root, l.first} {
		if _, ok := d.Rows[ev.index]; ok {
			continue
		}
		rows := &entryRows{}
		if e, err := readEntry(s.dir.Dump, ev.offset, ev.end); err == nil {
			var left int
			rows.Inputs, rows.Outputs, left = tensorStats(e)
			rows.Read = true
			rows.Warnings = entryWarnings(s.dir.Dump, e, left)
		} else {
			rows.Warnings = []verdict.Warning{{File: s.dir.Dump, Message: err.Error()}}
		}
		d.Rows[ev.index] = rows
	}
	return d
}

// rankFiles holds what was read from a rank's side files.
type rankFiles struct {
	stacks    map[string][]sidefile.Frame
	construct sidefile.Construct
	warnings  []verdict.Warning
}

// readSideFiles reads stack.json and construct.json of a rank folder for the
// given entry names; missing or damaged files become warnings.
func readSideFiles(rd dump.RankDir, names []string) *rankFiles {
	rf := &rankFiles{}
	want, calls := map[string]bool{}, map[string]bool{}
	for _, n := range names {
		want[dump.ParseName(n).ForwardName()] = true
		calls[n] = true
	}
	if rd.Stack == "" {
		rf.warnings = append(rf.warnings, verdict.Warning{File: rd.Dir, Message: "no stack.json: the code line is unknown"})
	} else if f, err := safeio.Open(rd.Stack); err != nil {
		rf.warnings = append(rf.warnings, verdict.Warning{File: rd.Stack, Message: err.Error()})
	} else {
		var sf sidefile.StackFile
		sf, err = sidefile.ReadStackFile(f, want)
		rf.stacks = sf.Frames
		f.Close()
		if err != nil {
			rf.warnings = append(rf.warnings, verdict.Warning{File: rd.Stack, Message: "damaged: " + err.Error() + "; the stacks before the damage were used"})
		}
		if msg := stackFormNote(sf.Triples); msg != "" {
			rf.warnings = append(rf.warnings, verdict.Warning{File: rd.Stack, Message: msg})
		}
	}
	if rd.Construct == "" {
		rf.warnings = append(rf.warnings, verdict.Warning{File: rd.Dir, Message: "no construct.json: the module chain is unknown"})
	} else if f, err := safeio.Open(rd.Construct); err != nil {
		rf.warnings = append(rf.warnings, verdict.Warning{File: rd.Construct, Message: err.Error()})
	} else {
		rf.construct, err = sidefile.ReadAncestors(f, calls)
		f.Close()
		if err != nil {
			rf.warnings = append(rf.warnings, verdict.Warning{File: rd.Construct, Message: "damaged: " + err.Error() + "; the parents before the damage were used"})
		}
	}
	return rf
}

// stackOf returns the frames of a call (a backward call takes its forward's).
func (rf *rankFiles) stackOf(name string) []sidefile.Frame {
	if rf == nil || rf.stacks == nil {
		return nil
	}
	return rf.stacks[dump.ParseName(name).ForwardName()]
}

// userFrames keeps the frames of the user's code, innermost first.
func userFrames(frames []sidefile.Frame) []verdict.Frame {
	var out []verdict.Frame
	for _, f := range frames {
		if f.File != "" && !f.IsLibrary() {
			out = append(out, verdict.Frame{File: f.File, Line: f.Line, Func: f.Func, Source: f.Source})
		}
	}
	return out
}

// uncovered lists the user frames of the later call that the earlier call's
// stack does not share: the code entered between the two.
func uncovered(before, after []sidefile.Frame) []verdict.Frame {
	b, a := userFrames(before), userFrames(after)
	// drop the common outer part
	i, j := len(b)-1, len(a)-1
	for i >= 0 && j >= 0 && b[i].File == a[j].File && b[i].Func == a[j].Func {
		i--
		j--
	}
	out := append([]verdict.Frame(nil), b[:i+1]...)
	if i+1 < len(b) {
		// the innermost shared function: the lines between the two calls
		out = append(out, b[i+1])
	}
	return out
}
