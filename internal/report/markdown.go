package report

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/notation"
)

// Summary returns the opening of the text report: the verdict sentence
// first, then the sentences that explain it (what the root call did, where
// the Inf became NaN, which collective carried it), in the same words.
func Summary(v *verdict.Verdict) []string {
	var b bytes.Buffer
	p := &printer{w: &b}
	withOrigin := v.Anomaly && v.Origin != nil
	switch {
	case evidenceOnly(v), evidenceOverDump(v):
		p.evidenceHeadline(v)
	case withOrigin:
		p.headline(v)
	default:
		p.clean(v)
	}
	paras := strings.SplitN(b.String(), "\n\n", 3)
	out := []string{strings.TrimSpace(paras[0])}
	if !withOrigin || len(paras) < 2 {
		return out
	}
	// the sentences are indented, and a long one continues on the next line
	for _, line := range strings.Split(paras[1], "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case len(out) > 1 && !strings.HasSuffix(out[len(out)-1], "."):
			out[len(out)-1] += " " + line
		default:
			out = append(out, line)
		}
	}
	return out
}

// ScannedLine returns the text report's closing lines as one: what was
// read, and the folders that are links.
func ScannedLine(v *verdict.Verdict) string {
	var b bytes.Buffer
	p := &printer{w: &b}
	p.scanned(v)
	return strings.ReplaceAll(strings.TrimSpace(b.String()), "\n", " ")
}

// EvidenceLines returns the text report's account of what the training
// log and the monitor said: one item per source ("log: ...", "monitor:
// ..."), its continuation lines after newlines. The agreements and
// contradictions are left out: Verdict.Evidence lists them.
func EvidenceLines(v *verdict.Verdict) []string {
	if v.Evidence == nil {
		return nil
	}
	var b bytes.Buffer
	p := &printer{w: &b}
	p.evidence(v)
	var out []string
	for _, line := range strings.Split(b.String(), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || t == "Evidence":
		case strings.HasPrefix(t, "agrees:") || strings.HasPrefix(t, "differs:"):
		case strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") || len(out) == 0:
			out = append(out, strings.Join(strings.Fields(t), " "))
		default:
			out[len(out)-1] += "\n" + t
		}
	}
	return out
}

// StepsNote describes the steps around the origin step as the text report
// does: "steps 0-4 clean; step 7 not read".
func StepsNote(v *verdict.Verdict) string {
	if v.Origin == nil {
		return ""
	}
	return clean(v)
}

// Markdown writes a compact summary of the verdict to paste into an issue
// tracker: the verdict in the words of the text report, the user's code line,
// the module chain, the confidence, a rank × step table (ranges of ranks per
// state when there are many ranks) and the first next step.
func Markdown(w io.Writer, v *verdict.Verdict) error {
	var b bytes.Buffer
	m := &mdWriter{w: &b, ops: knownOps(v)}
	lines := Summary(v)
	m.f("**%s**%s\n\n", "nanhunt:", m.inline(strings.TrimPrefix(lines[0], "nanhunt:")))
	for _, l := range lines[1:] {
		m.f("- %s\n", m.inline(l))
	}
	if len(lines) > 1 {
		m.f("\n")
	}
	if o := v.Origin; v.Anomaly && o != nil {
		m.origin(v)
	}
	m.recovered(v)
	m.table(v)
	if len(v.Ahead) > 0 {
		m.f("**Heading for overflow**\n\n")
		for i, a := range v.Ahead {
			if i == maxAhead {
				m.f("- … %d more\n", len(v.Ahead)-i)
				break
			}
			m.f("- %s\n", m.inline(a.Text))
		}
		m.f("\n")
	}
	if e := v.Evidence; e != nil {
		m.f("**Evidence**\n\n")
		for _, l := range EvidenceLines(v) {
			m.f("- %s\n", m.inline(strings.ReplaceAll(l, "\n", "; ")))
		}
		for _, a := range e.Agreements {
			m.f("- agrees: %s\n", m.inline(a))
		}
		for _, c := range e.Contradictions {
			m.f("- differs: %s\n", m.inline(c))
		}
		for _, n := range e.Notes {
			m.f("- gap: %s\n", m.inline(n))
		}
		m.f("\n")
	}
	if pl := v.Plan; pl != nil && pl.Collect != "" {
		m.f("**Collect next:** %s (`nanhunt plan` writes its msprobe config.json)\n\n", m.inline(pl.Collect))
	}
	if len(v.NextSteps) > 0 {
		label := "Next"
		if len(v.NextSteps) > 1 {
			label = fmt.Sprintf("Next (1 of %d)", len(v.NextSteps))
		}
		m.f("**%s:** %s\n\n", label, m.inline(v.NextSteps[0]))
	}
	if n := len(v.Warnings); n > 0 {
		m.f("**Warnings:** %d (%s)\n\n", n, m.inline(firstWarning(v.Warnings[0])))
	}
	if !evidenceOnly(v) {
		m.f("<sub>%s</sub>\n", m.inline(ScannedLine(v)))
	}
	if m.err != nil {
		return m.err
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

func firstWarning(w verdict.Warning) string {
	if w.File != "" {
		return w.File + ": " + w.Message
	}
	return w.Message
}

type mdWriter struct {
	w   io.Writer
	err error
	ops []string // entry names written as code wherever they appear
}

func (m *mdWriter) f(format string, args ...any) {
	if m.err == nil {
		_, m.err = fmt.Fprintf(m.w, format, printableArgs(args)...)
	}
}

// knownOps lists the entry names of the verdict, longest first, so that a
// name is never matched inside a longer one.
func knownOps(v *verdict.Verdict) []string {
	var ops []string
	add := func(s string) {
		if s != "" && !slices.Contains(ops, s) {
			ops = append(ops, s)
		}
	}
	if v.Origin != nil {
		add(v.Origin.Op)
	}
	if v.FirstNaN != nil {
		add(v.FirstNaN.Op)
	}
	if v.Carrier != nil {
		add(v.Carrier.Op)
	}
	for _, r := range v.Recovered {
		add(r.Op)
	}
	slices.SortStableFunc(ops, func(a, b string) int { return len(b) - len(a) })
	return ops
}

// inline escapes text for Markdown and writes the verdict's entry names,
// and what the text quotes in backticks (a command), as code
// (Tensor.__mul__ would otherwise turn bold).
func (m *mdWriter) inline(s string) string {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an unpaired backtick: no code spans
		return m.inlineOps(s)
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString(code(p))
		} else {
			b.WriteString(m.inlineOps(p))
		}
	}
	return b.String()
}

func (m *mdWriter) inlineOps(s string) string {
	var b strings.Builder
	for s != "" {
		at, op := -1, ""
		for _, o := range m.ops {
			if i := strings.Index(s, o); i >= 0 && (at < 0 || i < at) {
				at, op = i, o
			}
		}
		if at < 0 {
			b.WriteString(escapeMD(s))
			break
		}
		b.WriteString(escapeMD(s[:at]))
		b.WriteString(code(op))
		s = s[at+len(op):]
	}
	return b.String()
}

var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`,
	`<`, `&lt;`, `>`, `&gt;`, `|`, `\|`, "\n", " ",
)

func escapeMD(s string) string { return mdEscaper.Replace(s) }

// code writes s as a code span, choosing a fence its backticks cannot end.
func code(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func (m *mdWriter) origin(v *verdict.Verdict) {
	o := v.Origin
	if c := o.Code; c != nil {
		m.f("**Code:** %s in %s\n", code(fmt.Sprintf("%s:%d", c.File, c.Line)), code(c.Func))
		if c.Source != "" {
			fence := "```"
			if strings.Contains(c.Source, fence) {
				fence = "~~~~"
			}
			m.f("%spython\n%s\n%s\n", fence, c.Source, fence)
		}
		for _, fr := range o.Stack[min(1, len(o.Stack)):min(len(o.Stack), 4)] {
			m.f("called from %s in %s  \n", code(fmt.Sprintf("%s:%d", fr.File, fr.Line)), code(fr.Func))
		}
		m.f("\n")
	} else if iv := o.Interval; iv != nil {
		m.f("**Between:** ")
		if iv.After != nil {
			m.f("%s", code(iv.After.Op))
		} else {
			m.f("the start of step %d", o.Step)
		}
		m.f(" and %s", code(iv.Before.Op))
		if len(iv.Uncovered) > 0 {
			var frames []string
			for _, fr := range iv.Uncovered[:min(len(iv.Uncovered), 4)] {
				frames = append(frames, code(fmt.Sprintf("%s:%d", fr.File, fr.Line))+" in "+code(fr.Func))
			}
			m.f("; user code not covered by the dump: %s", strings.Join(frames, ", "))
		}
		m.f("\n\n")
	}
	if len(o.Chain) > 0 {
		parts := make([]string, len(o.Chain))
		for i, c := range o.Chain {
			parts[i] = code(c)
		}
		m.f("**Module chain:** %s\n\n", strings.Join(parts, " › "))
	}
	m.f("**Confidence:** %s", escapeMD(o.Confidence))
	if len(o.Reasons) > 0 {
		m.f(": %s", m.inline(strings.Join(o.Reasons, "; ")))
	}
	m.f("\n\n")
}

func (m *mdWriter) recovered(v *verdict.Verdict) {
	if len(v.Recovered) == 0 {
		return
	}
	var parts []string
	for _, r := range v.Recovered {
		parts = append(parts, fmt.Sprintf("step %d %s %s (%s)", r.Step, rankWord(r.Ranks), code(r.Op), kindWord(r.Kind)))
	}
	m.f("**Did not last:** %s\n\n", strings.Join(parts, "; "))
}

// mdCell is one rank at one step, as the table writes it.
type mdCell struct {
	sym    string // "·", "NaN", "+Inf", "-Inf", "overflow", "–", "…", "?", "✗"
	source bool
}

// Cell symbols of the rank × step table.
const (
	symClean      = "·"
	symNotDumped  = "–"
	symNotScanned = "?"
	symChecked    = "…" // read only until the anomaly showed that it lasts
	symDamaged    = "✗"
)

// cellKind is a rank state's symbol.
func cellKind(a verdict.RankState) string {
	switch v := a.Shown(); v {
	case "nan":
		return "NaN"
	case "+inf":
		return "+Inf"
	case "-inf":
		return "-Inf"
	default:
		return v
	}
}

// stepColumn is a run of steps whose ranks all showed the same.
type stepColumn struct {
	steps  []int
	status string
	cells  []mdCell // by position in the rank list
}

// columns works out every rank's cell at every dumped step, and merges
// neighbouring steps that look the same.
func columns(v *verdict.Verdict) (ranks []int, cols []stepColumn) {
	states := v.Steps
	seen := map[int]bool{}
	addRank := func(r int) {
		if !seen[r] {
			seen[r] = true
			ranks = append(ranks, r)
		}
	}
	for _, r := range v.Scanned.Ranks {
		addRank(r)
	}
	present := make([]map[int]bool, len(states))
	for i, s := range states {
		present[i], _ = notation.ParseRanges(s.Ranks)
		for r := range present[i] {
			addRank(r)
		}
	}
	slices.Sort(ranks)
	pos := map[int]int{}
	for i, r := range ranks {
		pos[r] = i
	}
	for i, s := range states {
		cells := make([]mdCell, len(ranks))
		for j, r := range ranks {
			switch {
			case !present[i][r]:
				cells[j].sym = symNotDumped
			case s.Status == "checked":
				cells[j].sym = symChecked
			case s.Status == "not_scanned":
				cells[j].sym = symNotScanned
			default:
				cells[j].sym = symClean
			}
		}
		for _, r := range s.Damaged {
			if j, ok := pos[r]; ok {
				cells[j].sym = symDamaged
			}
		}
		for _, a := range s.Anomalous {
			if j, ok := pos[a.Rank]; ok {
				cells[j] = mdCell{sym: cellKind(a), source: a.Role == "source"}
			}
		}
		if n := len(cols); n > 0 && cols[n-1].status == s.Status && slices.Equal(cols[n-1].cells, cells) &&
			cols[n-1].steps[len(cols[n-1].steps)-1] < s.Step {
			cols[n-1].steps = append(cols[n-1].steps, s.Step)
			continue
		}
		cols = append(cols, stepColumn{steps: []int{s.Step}, status: s.Status, cells: cells})
	}
	return ranks, cols
}

// Limits of the rank × step matrix; past them the table lists ranges of
// ranks per state instead.
const (
	mdMaxRanks = 16
	mdMaxCols  = 12
)

func (m *mdWriter) table(v *verdict.Verdict) {
	ranks, cols := columns(v)
	if len(cols) == 0 || len(ranks) == 0 {
		return
	}
	if len(ranks) <= mdMaxRanks && len(cols) <= mdMaxCols {
		m.matrix(ranks, cols)
		m.f("<sub>· clean, NaN / ±Inf first seen there (**bold**: born there), – not dumped, … read until the anomaly showed again, ? not read, ✗ damaged</sub>\n\n")
	} else {
		m.ranges(ranks, cols)
		m.f("<sub>the ranks in each state at each step: NaN / ±Inf first seen there (**bold**: born there)</sub>\n\n")
	}
}

func columnLabel(c stepColumn) string {
	label := notation.FormatRanges(c.steps)
	switch c.status {
	case "recovered":
		label += " (did not last)"
	case "checked":
		label += " (read in part)"
	}
	return label
}

// matrix writes ranks down, steps across.
func (m *mdWriter) matrix(ranks []int, cols []stepColumn) {
	m.f("| rank \\ step |")
	for _, c := range cols {
		m.f(" %s |", escapeMD(columnLabel(c)))
	}
	m.f("\n|---:|")
	for range cols {
		m.f(":---:|")
	}
	m.f("\n")
	for j, r := range ranks {
		m.f("| %d |", r)
		for _, c := range cols {
			cell := c.cells[j]
			if cell.source {
				m.f(" **%s** |", cell.sym)
			} else {
				m.f(" %s |", cell.sym)
			}
		}
		m.f("\n")
	}
	m.f("\n")
}

// ranges writes steps down, and for each the ranks in each state.
func (m *mdWriter) ranges(ranks []int, cols []stepColumn) {
	syms := []string{symClean, "NaN", "+Inf", "-Inf", "overflow", symDamaged, symNotDumped, symChecked, symNotScanned}
	names := map[string]string{symClean: "clean", symDamaged: "damaged", symNotDumped: "not dumped",
		symChecked: "read until the anomaly showed again", symNotScanned: "not read"}
	used := map[string]bool{}
	for _, c := range cols {
		for _, cell := range c.cells {
			used[cell.sym] = true
		}
	}
	var show []string
	for _, s := range syms {
		if used[s] {
			show = append(show, s)
		}
	}
	m.f("| step |")
	for _, s := range show {
		if n, ok := names[s]; ok {
			m.f(" %s |", n)
		} else {
			m.f(" %s |", s)
		}
	}
	m.f("\n|---|")
	for range show {
		m.f("---|")
	}
	m.f("\n")
	for _, c := range cols {
		m.f("| %s |", escapeMD(columnLabel(c)))
		for _, s := range show {
			var in, born []int
			for j, cell := range c.cells {
				if cell.sym == s {
					in = append(in, ranks[j])
					if cell.source {
						born = append(born, ranks[j])
					}
				}
			}
			text := shortRanges(in)
			switch {
			case len(born) == 0:
			case len(born) == len(in):
				text = "**" + text + "** (born there)"
			default:
				text += " (born on **" + shortRanges(born) + "**)"
			}
			m.f(" %s |", text)
		}
		m.f("\n")
	}
	m.f("\n")
}

// shortRanges writes ranks as ranges, cut to a length a table cell holds.
func shortRanges(ranks []int) string {
	s := notation.FormatRanges(ranks)
	const max = 48
	if len(s) <= max {
		return s
	}
	cut := strings.LastIndexByte(s[:max], ',')
	if cut < 0 {
		cut = max
	}
	return fmt.Sprintf("%s,… (%d ranks)", s[:cut], len(ranks))
}
