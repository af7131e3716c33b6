package htmlreport

import (
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/intranges"
	"github.com/nanhunt/nanhunt/internal/report"
)

// page is what the template shows.
type page struct {
	Title     string
	Source    string // the dump the verdict is about, when known
	V         *verdict.Verdict
	Status    string // anomaly, incomplete, recovered or clean
	Picture   bool   // there are steps and ranks to draw
	Headline  string
	Sentences []string
	Facts     []fact
	Frames    []frameView
	Timeline  *Timeline
	Hops      []hopView
	MoreHops  int
	Cands     []candGroup
	Evidence  []string // what the log and the monitor said, in the text report's words
	Plan      *planView
	Scanned   string
	Legend    []legendItem
	Marks     marks

	Data    template.JS
	Script  template.JS
	ECharts template.JS
	CSS     template.CSS
}

type fact struct {
	Label, Value, Note string
	Code               bool // the value is code: an op name
	Span               int  // columns of the six it takes
}

type frameView struct {
	verdict.Frame
	User   bool // the user's code rather than a library's
	Origin bool // the frame of the code line
}

type hopView struct {
	verdict.Hop
	Carrier bool
}

// candGroup is ranks with the same story: same op, stage, kind and role.
type candGroup struct {
	Step  int
	Ranks string
	Count int
	Op    string
	Index int
	Stage string
	Kind  string
	Role  string
}

type legendItem struct {
	Code         string // the cell states it stands for
	Label, Class string
}

// legendOf keeps the states the picture shows, and says which marks it has.
func legendOf(g *Grid) ([]legendItem, marks) {
	var b, r strings.Builder
	var m marks
	for _, c := range g.Cols {
		b.WriteString(c.Cells)
		r.WriteString(c.Roles)
		m.Carrier = m.Carrier || c.Carrier
	}
	cells, roles := b.String(), r.String()
	var out []legendItem
	for _, l := range legend {
		if strings.ContainsAny(cells, l.Code) {
			out = append(out, l)
		}
	}
	m.Source = strings.ContainsRune(roles, roleSource)
	m.Received = strings.ContainsRune(roles, roleReceived)
	return out, m
}

// marks are the highlights the picture draws.
type marks struct {
	Source, Received, Carrier bool
}

var legend = []legendItem{
	{string(rune(cellClean)), "clean", "clean"},
	{string([]rune{cellPosInf, cellNegInf}), "Inf", "inf"},
	{string(rune(cellNaN)), "NaN", "nan"},
	{string(rune(cellOverflow)), "overflow flag", "overflow"},
	{string(rune(cellDamaged)), "damaged", "damaged"},
	{string(rune(cellNotDumped)), "not dumped", "notdumped"},
	{string(rune(cellChecked)), "read until the anomaly showed again", "checked"},
	{string(rune(cellNotScanned)), "not read", "notscanned"},
}

// pageData is the JSON the page embeds: the verdict unchanged, and what the
// page derives from it.
type pageData struct {
	Verdict  *verdict.Verdict `json:"verdict"`
	Summary  []string         `json:"summary"`
	Grid     *Grid            `json:"grid"`
	Timeline *Timeline        `json:"timeline"`
}

func newPage(v *verdict.Verdict, opt Options) (*page, error) {
	p := &page{V: v, Title: opt.Title, Source: opt.DumpPath}
	if p.Title == "" {
		p.Title = "nanhunt report"
	}
	lines := report.Summary(v)
	p.Headline, p.Sentences = lines[0], lines[1:]
	switch {
	case v.Anomaly:
		p.Status = "anomaly"
	case !v.Complete:
		p.Status = "incomplete"
	case len(v.Recovered) > 0:
		p.Status = "recovered"
	default:
		p.Status = "clean"
	}
	if o := v.Origin; v.Anomaly && o != nil {
		p.Facts = facts(v)
		code := -1 // the frame of the code line
		if o.Code != nil {
			code = slices.Index(o.Stack, *o.Code)
		}
		for i, f := range o.Stack {
			p.Frames = append(p.Frames, frameView{Frame: f, User: f.File != "" && !(dump.Frame{File: f.File}).IsLibrary(), Origin: i == code})
		}
		if len(p.Frames) == 0 && o.Code != nil {
			p.Frames = []frameView{{Frame: *o.Code, User: true, Origin: true}}
		}
		p.Timeline = buildTimeline(v, opt.DumpPath)
	}
	const maxHops = 200
	for i, h := range v.Spread {
		if i == maxHops {
			p.MoreHops = len(v.Spread) - i
			break
		}
		p.Hops = append(p.Hops, hopView{Hop: h, Carrier: v.Carrier != nil && h.Op == v.Carrier.Op &&
			slices.Equal(h.FromRanks, v.Carrier.FromRanks) && slices.Equal(h.ToRanks, v.Carrier.ToRanks)})
	}
	p.Cands = groupCandidates(v.Candidates)
	p.Scanned = report.ScannedLine(v)
	p.Evidence = report.EvidenceLines(v)
	var err error
	if p.Plan, err = newPlan(v); err != nil {
		return nil, err
	}
	grid := buildGrid(v)
	p.Picture = len(grid.Cols) > 0 && len(grid.Ranks) > 0
	p.Legend, p.Marks = legendOf(grid)
	data, err := json.Marshal(pageData{Verdict: v, Summary: lines, Grid: grid, Timeline: p.Timeline})
	if err != nil {
		return nil, fmt.Errorf("encode the page data: %w", err)
	}
	// encoding/json escapes <, > and & (and U+2028/2029), so the JSON
	// cannot close the script element that holds it
	p.Data = template.JS(data)
	p.Script, p.ECharts, p.CSS = template.JS(pageJS), template.JS(echartsJS), template.CSS(pageCSS)
	return p, nil
}

// facts are the Origin lines of the text report: six short ones, then the
// op and the carrier side by side.
func facts(v *verdict.Verdict) []fact {
	o := v.Origin
	var out []fact
	out = append(out, fact{Label: "step", Value: fmt.Sprint(o.Step), Note: report.StepsNote(v), Span: 1})
	note := ""
	if o.Tie {
		note = "a tie: they made it independently and cannot be ordered"
	}
	if o.Unread {
		note = "they sent it, but their dumps were not read"
	}
	out = append(out, fact{Label: plural(len(o.Ranks), "rank", "ranks"), Value: intranges.Format(o.Ranks), Note: note, Span: 1})
	stage := fact{Label: "stage", Value: o.Stage, Span: 1}
	if report.MadeByUpdate(o) {
		stage.Note = fmt.Sprintf("made by the update at the end of step %d, first seen in %s", o.Step-1, o.Op)
	}
	out = append(out, stage)
	kind := fact{Label: "kind", Value: o.Kind, Span: 1}
	if v.FirstNaN != nil {
		kind.Note = "then nan at " + v.FirstNaN.Op
	}
	out = append(out, kind)
	captured := fact{Label: "origin in the dump", Value: "yes", Span: 1}
	if !o.Captured {
		captured.Value, captured.Note = "no", "the call that made it is not in the dump"
	}
	out = append(out, captured)
	out = append(out, fact{Label: "confidence", Value: o.Confidence, Span: 1})
	op := fact{Label: "op", Value: o.Op, Code: true, Span: 6}
	if c := v.Carrier; c != nil {
		op.Span = 3
		out = append(out, op, fact{Label: "carrier", Value: c.Op, Code: true, Span: 3,
			Note: fmt.Sprintf("%s → %s", orUnread(c.FromRanks), intranges.Format(c.ToRanks))})
	} else {
		out = append(out, op)
	}
	return out
}

func orUnread(ranks []int) string {
	if len(ranks) == 0 {
		return "ranks not read"
	}
	return intranges.Format(ranks)
}

func groupCandidates(cs []verdict.Candidate) []candGroup {
	type key struct {
		step                  int
		op, stage, kind, role string
	}
	var order []key
	byKey := map[key][]verdict.Candidate{}
	for _, c := range cs {
		stage := c.Stage
		if c.Phase != "" {
			stage = c.Phase // the stage in the words of the origin and the timeline
		}
		k := key{c.Step, c.Op, stage, c.Kind, c.Role}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], c)
	}
	var out []candGroup
	for _, k := range order {
		g := byKey[k]
		ranks := make([]int, len(g))
		idx := g[0].Index
		for i, c := range g {
			ranks[i] = c.Rank
			idx = min(idx, c.Index)
		}
		out = append(out, candGroup{Step: k.step, Ranks: intranges.Format(ranks), Count: len(g), Op: k.op,
			Index: idx, Stage: k.stage, Kind: k.kind, Role: k.role})
	}
	return out
}

// planView is what to collect next.
type planView struct {
	Why, Collect, Config, Register string
	Then                           []string
}

func newPlan(v *verdict.Verdict) (*planView, error) {
	pl := v.Plan
	if pl == nil {
		return nil, nil
	}
	cfg, err := pl.Config.Indented()
	if err != nil {
		return nil, fmt.Errorf("plan config: %w", err)
	}
	return &planView{Why: pl.Why, Collect: pl.Collect, Config: strings.TrimSpace(string(cfg)), Register: pl.Register, Then: pl.Then}, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func rankWord(ranks []int) string {
	return plural(len(ranks), "rank ", "ranks ") + intranges.Format(ranks)
}

func kindName(k string) string {
	switch k {
	case "nan":
		return "NaN"
	case "inf", "+inf":
		return "Inf"
	case "-inf":
		return "-Inf"
	}
	return k
}
