package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/nanhunt/nanhunt/internal/safeio"

	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/ranklist"
)

// Text writes the verdict for a person: the answer in plain words first,
// then the evidence.
func Text(w io.Writer, v *verdict.Verdict) error {
	p := &printer{w: w}
	switch {
	case evidenceOnly(v):
		p.evidenceHeadline(v)
		p.evidence(v)
		p.plan(v, true)
		p.warnings(v)
		return p.err
	case !v.Anomaly:
		p.clean(v)
		p.ahead(v)
		p.evidence(v)
	case evidenceOverDump(v):
		p.evidenceHeadline(v)
		p.unread(v)
		p.evidence(v)
		p.plan(v, true)
	default:
		p.headline(v)
		p.recovered(v)
		p.origin(v)
		p.spread(v)
		p.confidence(v)
		p.ahead(v)
		p.evidence(v)
		p.list("Next", v.NextSteps)
		p.plan(v, false)
		p.candidates(v)
	}
	p.suppressed(v)
	p.warnings(v)
	p.scanned(v)
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, printableArgs(args)...)
	}
}

func kindWord(k string) string {
	switch k {
	case "nan":
		return "NaN"
	case "inf":
		return "Inf"
	case "overflow":
		return "an overflow (NaN or Inf)"
	}
	return k
}

func rankWord(ranks []int) string {
	return plural(len(ranks), "rank ", "ranks ") + notation.FormatRanges(ranks)
}

func stepsWord(steps []int) string {
	return plural(len(steps), "step ", "steps ") + notation.FormatRanges(steps)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// phaseWord is the phase of a call in the report's words.
func phaseWord(stage, phase string) string {
	if phase != "" {
		return phase
	}
	return stage
}

// MadeByUpdate reports an origin that the update at the end of the
// previous step made: not captured, in the optimizer, first seen in a
// later call.
func MadeByUpdate(o *verdict.Origin) bool {
	return !o.Captured && !o.Unread && o.Stage == "optimizer" && o.Step > 0
}

func (p *printer) headline(v *verdict.Verdict) {
	o := v.Origin
	switch {
	case o.Captured:
		p.f("nanhunt: the first %s was born at step %d on %s, in %s (%s), confidence %s.\n\n",
			kindWord(o.Kind), o.Step, rankWord(o.Ranks), o.Op, phaseWord(o.Stage, o.Phase), o.Confidence)
	case MadeByUpdate(o) && explains(v, verdict.ExplainBornEarlier):
		p.f("nanhunt: the first %s is first seen at step %d on %s, in %s, in weights the update at the end of step %d wrote; it was born before that update (confidence %s).\n\n",
			kindWord(o.Kind), o.Step, rankWord(o.Ranks), o.Op, o.Step-1, o.Confidence)
	case MadeByUpdate(o):
		p.f("nanhunt: the first %s was made by the update at the end of step %d, and is first seen at step %d on %s, in %s (confidence %s).\n\n",
			kindWord(o.Kind), o.Step-1, o.Step, rankWord(o.Ranks), o.Op, o.Confidence)
	case o.Unread:
		p.f("nanhunt: the first %s comes from %s, %s not read: at step %d it arrives %s, in %s (%s) (confidence %s).\n\n",
			kindWord(o.Kind), rankWord(o.Ranks), plural(len(o.Ranks), "which was", "which were"), o.Step, arrivesOn(v), o.Op, phaseWord(o.Stage, o.Phase), o.Confidence)
	default:
		p.f("nanhunt: the first %s appears at step %d on %s, in %s (%s); where it was made is not in the dump (confidence %s).\n\n",
			kindWord(o.Kind), o.Step, rankWord(o.Ranks), o.Op, phaseWord(o.Stage, o.Phase), o.Confidence)
	}
	switch {
	case o.Collective && o.Tie:
		p.f("  %s received finite values on every rank%s and returned %s: the collective itself made it, in more than\n  one process group independently (a tie).\n", o.Op, everyRankRead(v), kindWord(o.Kind))
	case o.Collective:
		p.f("  %s received finite values on every rank%s and returned %s: the collective itself made it.\n", o.Op, everyRankRead(v), kindWord(o.Kind))
	case o.Unread:
		p.f("  The ranks that sent it (%s) were not read; %s is where it arrived.\n", rankWord(o.Ranks), o.Op)
	case MadeByUpdate(o):
		p.f("  %s reads weights that already held it when step %d began; the update that wrote them is not in the dump.\n", o.Op, o.Step)
	case !o.Captured:
		p.f("  The call that made it is not in the dump: %s is the first call that shows it, and it already\n  had it in its inputs.\n", o.Op)
	default:
		p.f("  %s turned finite inputs into %s", o.Op, kindWord(o.Kind))
		if o.Tie {
			p.f(", on %s at the same time (a tie: they cannot be ordered)", rankWord(o.Ranks))
		}
		p.f(".\n")
	}
	if v.FirstNaN != nil {
		p.f("  The Inf became NaN at %s.\n", v.FirstNaN.Op)
	}
	if c := v.Carrier; c != nil {
		from := rankWord(c.FromRanks)
		if len(c.FromRanks) == 0 {
			from = "ranks that were not read"
		}
		p.f("  %s carried it from %s to %s.\n", c.Op, from, rankWord(c.ToRanks))
	} else if len(o.Ranks) > 0 && !explains(v, verdict.ExplainNoCollectives) {
		p.f("  No collective carried it to another rank in step %d.\n", o.Step)
	}
	for _, e := range v.Explanations {
		p.f("  %s\n", e.Text)
	}
	p.f("\n")
}

// explains reports whether the verdict holds an explanation of the kind.
func explains(v *verdict.Verdict, kind string) bool {
	for _, e := range v.Explanations {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

// InDump says whether the origin is in the dump, and if not, why not.
func InDump(o *verdict.Origin) string {
	switch {
	case o.Unread:
		return fmt.Sprintf("no: it arrived from %s, %s not read", rankWord(o.Ranks), plural(len(o.Ranks), "which was", "which were"))
	case !o.Captured:
		return "no: the first call that shows it already had it in its inputs"
	}
	return "yes"
}

// arrivesOn names the ranks where an origin that was not read arrives:
// the receivers of its call, as the spread tells them.
func arrivesOn(v *verdict.Verdict) string {
	o := v.Origin
	for _, h := range v.Spread {
		if h.Step == o.Step && h.Op == o.Op && len(h.ToRanks) > 0 {
			return "on " + rankWord(h.ToRanks)
		}
	}
	return "on the ranks read"
}

func (p *printer) origin(v *verdict.Verdict) {
	o := v.Origin
	p.f("Origin\n")
	steps := fmt.Sprintf("%d", o.Step)
	if before := clean(v); before != "" {
		steps += "   (" + before + ")"
	}
	p.f("  %-12s %s\n", "step", steps)
	p.f("  %-12s %s\n", "rank", strings.TrimPrefix(strings.TrimPrefix(rankWord(o.Ranks), "ranks "), "rank "))
	p.f("  %-12s %s\n", "op", o.Op)
	stage := phaseWord(o.Stage, o.Phase)
	if MadeByUpdate(o) {
		stage = fmt.Sprintf("optimizer: the update at the end of step %d (first seen in %s)", o.Step-1, o.Op)
	}
	p.f("  %-12s %s\n", "stage", stage)
	kind := o.Kind
	if f := v.FirstNaN; f != nil {
		kind += ", then nan at " + f.Op
		if f.Step != o.Step {
			kind += fmt.Sprintf(" (step %d)", f.Step)
		}
	}
	p.f("  %-12s %s\n", "kind", kind)
	p.f("  %-12s %s\n", "in the dump", InDump(o))
	if o.Code != nil {
		p.f("  %-12s %s:%d in %s\n", "code", o.Code.File, o.Code.Line, o.Code.Func)
		if o.Code.Source != "" {
			p.f("  %-12s   %s\n", "", o.Code.Source)
		}
		for _, fr := range o.Stack[1:min(len(o.Stack), 4)] {
			p.f("  %-12s %s:%d in %s\n", "called from", fr.File, fr.Line, fr.Func)
		}
	} else {
		p.f("  %-12s unknown (no stack recorded for it)\n", "code")
	}
	if len(o.Chain) > 0 {
		p.f("  %-12s %s\n", "module", strings.Join(o.Chain, "\n               > "))
	}
	p.tensors(o.Inputs, o.Outputs)
	if iv := o.Interval; iv != nil {
		p.f("  %-12s ", "between")
		if iv.After != nil {
			p.f("%s", iv.After.Op)
			if iv.AfterCode != nil {
				p.f(" (%s:%d)", iv.AfterCode.File, iv.AfterCode.Line)
			}
		} else {
			p.f("the start of step %d", o.Step)
		}
		p.f("\n  %-12s and %s", "", iv.Before.Op)
		if iv.Code != nil {
			p.f(" (%s:%d)", iv.Code.File, iv.Code.Line)
		}
		p.f("\n")
		for _, fr := range iv.Uncovered {
			p.f("  %-12s %s:%d in %s\n", "uncovered", fr.File, fr.Line, fr.Func)
		}
	}
	p.f("\n")
}

// clean describes the steps read before the origin step.
func clean(v *verdict.Verdict) string {
	var before, partial, after []int
	status := map[int]string{}
	for _, st := range v.Steps {
		status[st.Step] = st.Status
	}
	for _, s := range v.Scanned.Steps {
		switch {
		case s >= v.Origin.Step:
		case status[s] == "unread" || status[s] == "incomplete":
			partial = append(partial, s)
		default:
			before = append(before, s)
		}
	}
	after = v.Scanned.NotScanned
	var parts []string
	if len(before) > 0 {
		parts = append(parts, stepsWord(before)+" clean")
	}
	if len(partial) > 0 {
		parts = append(parts, stepsWord(partial)+" not read whole")
	}
	if len(after) > 0 {
		parts = append(parts, stepsWord(after)+" not read")
	}
	return strings.Join(parts, "; ")
}

// tensors prints the statistics of the origin's inputs and outputs as one
// table, its columns as wide as their cells, under the labels of the
// origin's other lines.
func (p *printer) tensors(ins, outs []verdict.TensorStat) {
	var c textTable
	var labels []string
	for _, side := range []struct {
		label string
		ts    []verdict.TensorStat
	}{{"inputs", ins}, {"outputs", outs}} {
		for i, t := range side.ts {
			label := ""
			if i == 0 {
				label = side.label
			}
			labels = append(labels, label)
			if i == 8 {
				c.add(fmt.Sprintf("... %d more", len(side.ts)-i))
				break
			}
			shape := make([]string, len(t.Shape))
			for j, d := range t.Shape {
				shape[j] = fmt.Sprint(d)
			}
			c.add(t.Slot, strings.TrimPrefix(t.Dtype, "torch."), "["+strings.Join(shape, ",")+"]",
				"max "+t.Max.String(), "min "+t.Min.String(), t.Holds)
		}
	}
	for i, l := range c.lines() {
		p.f("  %s %s\n", pad(labels[i], 12), l)
	}
}

func (p *printer) spread(v *verdict.Verdict) {
	if len(v.Spread) == 0 {
		return
	}
	p.f("Spread (in the order the collectives tell)\n")
	c := textTable{indent: "  "}
	for i, h := range v.Spread {
		if i == 12 {
			c.add(fmt.Sprintf("... %d more", len(v.Spread)-i))
			break
		}
		from := notation.FormatRanges(h.FromRanks)
		if from == "" {
			from = "?"
		}
		op := h.Op
		if h.Step != v.Origin.Step {
			op = fmt.Sprintf("%s (step %d)", h.Op, h.Step)
		}
		to := from + " -> " + notation.FormatRanges(h.ToRanks)
		if len(h.Unread) > 0 {
			to += fmt.Sprintf("   (not read: %s)", notation.FormatRanges(h.Unread))
		}
		c.add(op, to)
	}
	c.print(p)
	p.f("\n")
}

func (p *printer) confidence(v *verdict.Verdict) {
	p.f("Confidence: %s\n", v.Origin.Confidence)
	for _, r := range v.Origin.Reasons {
		p.f("  - %s\n", r)
	}
	p.f("\n")
}

func (p *printer) list(title string, items []string) {
	if len(items) == 0 {
		return
	}
	p.f("%s\n", title)
	for _, s := range items {
		p.f("  - %s\n", s)
	}
	p.f("\n")
}

// candidates lists what each rank was, ranks with the same story on one line.
func (p *printer) candidates(v *verdict.Verdict) {
	if len(v.Candidates) == 0 {
		return
	}
	type group struct {
		c     verdict.Candidate
		ranks []int
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, c := range v.Candidates {
		key := c.Op + "\x00" + phaseWord(c.Stage, c.Phase) + "\x00" + c.Kind + "\x00" + c.Role
		g := byKey[key]
		if g == nil {
			g = &group{c: c}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.ranks = append(g.ranks, c.Rank)
	}
	p.f("Ranks at step %d\n", v.Origin.Step)
	c := textTable{indent: "  "}
	for i, g := range groups {
		if i == 16 {
			c.add(fmt.Sprintf("... %d more (see --format json)", len(groups)-i))
			break
		}
		c.add(rankWord(g.ranks), g.c.Op, phaseWord(g.c.Stage, g.c.Phase), g.c.Kind, g.c.Role)
	}
	c.print(p)
	p.f("\n")
}

func (p *printer) suppressed(v *verdict.Verdict) {
	if len(v.Suppressed) == 0 {
		return
	}
	p.f("Not counted as origins\n")
	c := textTable{indent: "  "}
	for i, s := range v.Suppressed {
		if i == 10 {
			c.add(fmt.Sprintf("... %d more (see --format json)", len(v.Suppressed)-i))
			break
		}
		c.add(s.Op, s.Values, fmt.Sprintf("x%d", s.Count), stepsWord(s.Steps), rankWord(s.Ranks), s.Reason)
	}
	c.print(p)
	p.f("\n")
}

func (p *printer) warnings(v *verdict.Verdict) {
	if len(v.Warnings) == 0 {
		return
	}
	p.f("Warnings\n")
	for i, w := range v.Warnings {
		if i == 20 {
			p.f("  ... %d more (see --format json)\n", len(v.Warnings)-i)
			break
		}
		if w.File != "" {
			p.f("  - %s: %s\n", w.File, w.Message)
		} else {
			p.f("  - %s\n", w.Message)
		}
	}
	p.f("\n")
}

func (p *printer) scanned(v *verdict.Verdict) {
	s := v.Scanned
	p.f("Read %d %s (%s) of %s, %s: ", s.Files, plural(s.Files, "file", "files"), Size(s.Bytes), stepsWord(s.Steps), rankWord(s.Ranks))
	switch {
	case s.Files > 0 && s.Cleared == s.Files:
		p.f("all cleared by a byte search (nothing in them can be NaN or Inf)")
	case s.Cleared == 0:
		p.f("all parsed (%d entries)", s.Entries)
	default:
		p.f("%d cleared by a byte search, %d parsed (%d entries)", s.Cleared, s.Files-s.Cleared, s.Entries)
	}
	switch {
	case s.CheckedNext == nil:
	case checkedShowedIt(v):
		p.f("; step %d was read only until it showed that the anomaly lasts", *s.CheckedNext)
	default:
		p.f("; step %d, read to see whether the anomaly lasts, could not be read whole", *s.CheckedNext)
	}
	p.f(".\n")
	if len(v.NotDumped) > 0 {
		p.f("%s of the job %s no folder at any step read (not dumped).\n", upperRank(rankWord(v.NotDumped)), plural(len(v.NotDumped), "has", "have"))
	}
	p.links(s)
}

// shownLinks is how many links the text report names; --format json has
// the rest.
const shownLinks = 3

// links names the folders read through symbolic links, the first few of
// many.
func (p *printer) links(s verdict.Scanned) {
	total := max(s.LinksTotal, len(s.Links))
	switch {
	case total == 0:
	case total == 1:
		p.f("%s is a link to %s.\n", s.Links[0].Path, s.Links[0].Target)
	case total <= shownLinks:
		p.f("Folders that are links: %s.\n", linkList(s.Links))
	default:
		p.f("%d folders are links (--format json lists them), among them %s.\n", total, linkList(s.Links[:min(len(s.Links), shownLinks)]))
	}
}

// linkList writes links as "path -> target, ...".
func linkList(links []verdict.Link) string {
	parts := make([]string, len(links))
	for i, l := range links {
		parts[i] = l.Path + " -> " + l.Target
	}
	return strings.Join(parts, ", ")
}

// checkedShowedIt reports whether the checked step showed the anomaly
// again (it may show nothing and not be read whole).
func checkedShowedIt(v *verdict.Verdict) bool {
	for _, st := range v.Steps {
		if v.Scanned.CheckedNext != nil && st.Step == *v.Scanned.CheckedNext {
			return st.Status == "checked"
		}
	}
	return true
}

// upperRank capitalises "rank"/"ranks" at the start of a sentence.
func upperRank(s string) string { return "R" + strings.TrimPrefix(s, "r") }

func (p *printer) clean(v *verdict.Verdict) {
	p.f("%s\n\n", CleanHeadline(v))
	p.recovered(v)
	p.unread(v)
	p.list("Next", v.NextSteps)
}

// everyRankRead qualifies "every rank" in a sentence about the origin
// step when some rank of it, or of the job, was not read: " read (ranks
// 6,7 were not)", " read (no summary from node 3 of 4 (its ranks
// unknown))"; "" when every rank was read.
func everyRankRead(v *verdict.Verdict) string {
	var unseen []int
	if o := v.Origin; o != nil {
		unseen = append(unseen, o.PossibleSources...)
		for _, u := range v.Unread {
			if u.Step == o.Step {
				unseen = append(unseen, u.Ranks...)
			}
		}
	}
	unseen = ranklist.Unique(append(unseen, v.NotDumped...))
	var not []string
	if len(unseen) > 0 {
		not = append(not, fmt.Sprintf("%s %s not", rankWord(unseen), plural(len(unseen), "was", "were")))
	}
	if len(v.MissingNodes) > 0 {
		not = append(not, "no summary from "+ranklist.MissingWords(v.MissingNodes))
	}
	if len(not) == 0 {
		return ""
	}
	return " read (" + strings.Join(not, "; ") + ")"
}

// CleanHeadline is the first line of a verdict without an anomaly: a
// clean bill only when every expected rank-step was read whole.
func CleanHeadline(v *verdict.Verdict) string {
	lasting := ""
	if len(v.Recovered) > 0 {
		lasting = "lasting "
	}
	switch {
	case !v.Complete && len(v.Unread) == 0 && len(v.MissingNodes) == 0:
		return fmt.Sprintf("nanhunt: no %sNaN or Inf in what was read; the verdict does not say that every expected rank-step was read whole.", lasting)
	case !v.Complete:
		return fmt.Sprintf("nanhunt: no %sNaN or Inf in what could be read; %s.", lasting, NotRead(v, "could not be read"))
	}
	return fmt.Sprintf("nanhunt: no %sNaN or Inf in %s (%s).", lasting, stepsWord(v.Scanned.Steps), rankWord(v.Scanned.Ranks))
}

// NotRead says what a verdict that is not complete could not read: "steps
// 5-7 (ranks 0,1) " and then how, "no summary came from node 3 of 4 (its
// ranks unknown)", or both.
func NotRead(v *verdict.Verdict, how string) string {
	var parts []string
	if len(v.Unread) > 0 {
		parts = append(parts, ranklist.UnreadWords(v.Unread)+" "+how)
	}
	if len(v.MissingNodes) > 0 {
		parts = append(parts, "no summary came from "+ranklist.MissingWords(v.MissingNodes))
	}
	return strings.Join(parts, "; ")
}

// unread lists the expected rank-steps that could not be read whole.
func (p *printer) unread(v *verdict.Verdict) {
	if len(v.Unread) == 0 && len(v.MissingNodes) == 0 {
		return
	}
	p.f("Not read whole (nothing is known of them)\n")
	c := textTable{indent: "  "}
	for _, u := range v.Unread {
		c.add(fmt.Sprintf("step %d", u.Step), rankWord(u.Ranks), u.Reason)
	}
	if len(v.MissingNodes) > 0 {
		c.add("every step", ranklist.MissingWords(v.MissingNodes), "no summary")
	}
	c.print(p)
	p.f("\n")
}

// recovered lists anomalies that the next step no longer showed.
func (p *printer) recovered(v *verdict.Verdict) {
	if len(v.Recovered) == 0 {
		return
	}
	p.f("Did not last (the next step was clean again; --strict counts them)\n")
	c := textTable{indent: "  "}
	for _, r := range v.Recovered {
		c.add(fmt.Sprintf("step %d", r.Step), rankWord(r.Ranks), r.Op, phaseWord(r.Stage, r.Phase), r.Kind)
	}
	c.print(p)
	p.f("\n")
}

// Size writes a byte count for people: "3.7 MiB".
func Size(n int64) string { return safeio.Size(n) }

// pad right-pads s with spaces to n characters.
func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}
