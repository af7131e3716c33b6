package htmlreport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/intranges"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/dump"
)

// Grid is the propagation picture: ranks down, time across (every dumped
// step; within the step of the origin, the birth and then each collective
// that spread it, in execution order). The page aggregates rows into buckets
// of ranks; the states of single ranks are kept so that it can re-bucket.
type Grid struct {
	// Ranks are every rank of the run, in row order: grouped by process
	// group when the spread names groups, ascending otherwise.
	Ranks  []int       `json:"ranks"`
	Groups []GridGroup `json:"groups"`
	Cols   []GridCol   `json:"cols"`
	// Bucket is the number of ranks per row the page starts with.
	Bucket int `json:"bucket"`
}

// GridGroup is a run of rows that belong to one process group.
type GridGroup struct {
	Label string `json:"label"`
	Start int    `json:"start"` // index into Ranks
	End   int    `json:"end"`   // exclusive
}

// GridCol is one column of the picture.
type GridCol struct {
	Step   int    `json:"step"`
	Status string `json:"status"` // the step's status (verdict.StepState)
	Label  string `json:"label"`  // axis label
	Phase  string `json:"phase"`  // "" for a whole step; "born", a collective's short name, or "end" inside the origin step
	Op     string `json:"op,omitempty"`
	// Hop numbers the collectives of the origin step from 1, in execution
	// order; Hops is the number of spread entries the column stands for.
	Hop     int  `json:"hop,omitempty"`
	Hops    int  `json:"hops,omitempty"`
	Carrier bool `json:"carrier,omitempty"`
	Origin  bool `json:"origin,omitempty"` // a column of the origin step
	// Cells holds one state code per rank (in Ranks order), or a single
	// code when every rank is in that state. Codes: see the cell constants.
	Cells string `json:"cells"`
	// Roles holds one role code per rank, "" when no rank has a role.
	Roles string `json:"roles,omitempty"`
}

// Cell states.
const (
	cellClean      = 'c'
	cellNaN        = 'n'
	cellPosInf     = 'i'
	cellNegInf     = 'j'
	cellOverflow   = 'o'
	cellDamaged    = 'd'
	cellNotDumped  = 'x'
	cellNotScanned = 'u'
	cellChecked    = 'k' // read only until the anomaly showed that it lasts
)

// Cell roles.
const (
	roleNone      = '.'
	roleSource    = 's'
	roleReceived  = 'r'
	roleInherited = 'h'
	roleFlagged   = 'f'
	roleSeen      = 'w'
)

// Limits of the picture.
const (
	// maxHopCols is the number of spread columns kept in the origin step;
	// the rest show in its "end" column.
	maxHopCols = 16
	// targetRows is the number of rows the page starts with at most.
	targetRows = 64
)

// kindCell is a rank state's cell.
func kindCell(a verdict.RankState) byte {
	switch a.Shown() {
	case "overflow":
		return cellOverflow
	case "-inf":
		return cellNegInf
	case "+inf":
		return cellPosInf
	}
	return cellNaN
}

func roleCode(role string) byte {
	switch role {
	case "source":
		return roleSource
	case "received":
		return roleReceived
	case "inherited":
		return roleInherited
	case "flagged":
		return roleFlagged
	}
	return roleSeen
}

// buildGrid works the picture out of the verdict's steps (or, for a verdict
// written before they existed, out of what it scanned and its candidates).
func buildGrid(v *verdict.Verdict) *Grid {
	states := v.Steps
	if len(states) == 0 {
		states = stepsFromCandidates(v)
	}
	ranks := allRanks(v, states)
	g := &Grid{Cols: []GridCol{}}
	g.Ranks, g.Groups = groupRanks(ranks, v)
	if g.Ranks == nil {
		g.Ranks = []int{}
	}
	pos := make(map[int]int, len(g.Ranks))
	for i, r := range g.Ranks {
		pos[r] = i
	}
	originStep := -1
	if v.Anomaly && v.Origin != nil {
		originStep = v.Origin.Step
	}
	for _, st := range states {
		base := baseCells(st, g.Ranks, pos)
		if st.Step == originStep && st.Status == "anomaly" {
			g.Cols = append(g.Cols, originCols(v, st, base, pos)...)
			continue
		}
		cells, roles := slices.Clone(base), newRoles(len(base))
		for _, a := range st.Anomalous {
			if i, ok := pos[a.Rank]; ok {
				cells[i], roles[i] = kindCell(a), roleCode(a.Role)
			}
		}
		col := GridCol{Step: st.Step, Status: st.Status, Label: fmt.Sprint(st.Step)}
		col.Cells, col.Roles = encodeCells(cells), encodeRoles(roles)
		g.Cols = append(g.Cols, col)
	}
	g.Bucket = defaultBucket(g.Groups)
	return g
}

// allRanks is every rank scanned or dumped at some step, ascending.
func allRanks(v *verdict.Verdict, states []verdict.StepState) []int {
	seen := map[int]bool{}
	var out []int
	add := func(r int) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, r := range v.Scanned.Ranks {
		add(r)
	}
	for _, st := range states {
		if set, err := intranges.Parse(st.Ranks); err == nil {
			for r := range set {
				add(r)
			}
		}
		for _, a := range st.Anomalous {
			add(a.Rank)
		}
	}
	slices.Sort(out)
	return out
}

// baseCells is a step before anyone's anomaly: clean, not dumped, not
// read, read only until the anomaly showed again, and damaged ranks.
func baseCells(st verdict.StepState, ranks []int, pos map[int]int) []byte {
	present, err := intranges.Parse(st.Ranks)
	cells := make([]byte, len(ranks))
	for i, r := range ranks {
		switch {
		case err == nil && !present[r]:
			cells[i] = cellNotDumped
		case st.Status == "checked":
			cells[i] = cellChecked
		case st.Status == "not_scanned":
			cells[i] = cellNotScanned
		default:
			cells[i] = cellClean
		}
	}
	for _, r := range st.Damaged {
		if i, ok := pos[r]; ok {
			cells[i] = cellDamaged
		}
	}
	return cells
}

func newRoles(n int) []byte {
	return []byte(strings.Repeat(string(rune(roleNone)), n))
}

// originCols splits the step of the origin into the birth, one column per
// collective that spread it (neighbouring hops of the same call share one),
// and the end of the step when it shows more than the last hop.
func originCols(v *verdict.Verdict, st verdict.StepState, base []byte, pos map[int]int) []GridCol {
	final, finalRoles := slices.Clone(base), newRoles(len(base))
	kindOf := map[int]byte{}
	for _, a := range st.Anomalous {
		if i, ok := pos[a.Rank]; ok {
			final[i], finalRoles[i] = kindCell(a), roleCode(a.Role)
			kindOf[a.Rank] = final[i]
		}
	}
	cells, roles := slices.Clone(base), newRoles(len(base))
	for i := range finalRoles {
		if finalRoles[i] == roleSource {
			cells[i], roles[i] = final[i], roleSource
		}
	}
	if len(v.Spread) == 0 {
		col := GridCol{Step: st.Step, Status: st.Status, Label: fmt.Sprint(st.Step), Origin: true}
		col.Cells, col.Roles = encodeCells(final), encodeRoles(finalRoles)
		return []GridCol{col}
	}
	mk := func(phase, op string, hops int) GridCol {
		c := GridCol{Step: st.Step, Status: st.Status, Label: fmt.Sprintf("%d %s", st.Step, phase),
			Phase: phase, Op: op, Hops: hops, Origin: true}
		c.Cells, c.Roles = encodeCells(cells), encodeRoles(roles)
		return c
	}
	cols := []GridCol{mk("born", "", 0)}
	carrier := ""
	if v.Carrier != nil {
		carrier = v.Carrier.Op
	}
	carried := false
	hops := v.Spread
	for i := 0; i < len(hops); {
		j := i + 1
		for j < len(hops) && hops[j].Op == hops[i].Op && hops[j].Step == hops[i].Step {
			j++
		}
		if len(cols) > maxHopCols {
			break
		}
		// a receiver is marked in the column of the call that reached it
		for p, r := range roles {
			if r == roleReceived {
				roles[p] = roleNone
			}
		}
		for _, h := range hops[i:j] {
			for _, r := range h.ToRanks {
				p, ok := pos[r]
				if !ok || roles[p] == roleSource {
					continue
				}
				k, ok := kindOf[r]
				if !ok {
					k = cellNaN
				}
				cells[p], roles[p] = k, roleReceived
			}
		}
		c := mk(shortOp(hops[i].Op), hops[i].Op, j-i)
		c.Hop = len(cols)
		c.Label = fmt.Sprintf("%d #%d %s", st.Step, c.Hop, c.Phase)
		if hops[i].Op == carrier && !carried {
			c.Carrier, carried = true, true
		}
		cols = append(cols, c)
		i = j
	}
	if string(cells) != string(final) {
		cells, roles = final, finalRoles
		cols = append(cols, mk("end", "", 0))
	}
	return cols
}

// shortOp names a call for an axis label: "Distributed.all_reduce.1.forward"
// becomes "all_reduce.1".
func shortOp(op string) string {
	n := dump.ParseName(op)
	if n.Call < 0 || n.Module {
		return op
	}
	return fmt.Sprintf("%s.%d", n.API, n.Call)
}

// encodeCells writes one code per rank, or one code when all are equal.
func encodeCells(cells []byte) string {
	if len(cells) > 0 && allSame(cells) {
		return string(cells[:1])
	}
	return string(cells)
}

func encodeRoles(roles []byte) string {
	if len(roles) == 0 || (allSame(roles) && roles[0] == roleNone) {
		return ""
	}
	return string(roles)
}

func allSame(b []byte) bool {
	for _, c := range b[1:] {
		if c != b[0] {
			return false
		}
	}
	return true
}

// groupRanks orders the ranks by the process groups of the spread: each
// group named by a hop, in the order they appear, takes its ranks that no
// earlier group took; groups are then sorted by their lowest rank, and ranks
// in no group come last. A single group covering every rank is no grouping.
func groupRanks(ranks []int, v *verdict.Verdict) ([]int, []GridGroup) {
	all := []GridGroup{{Label: "all ranks", Start: 0, End: len(ranks)}}
	var groups [][]int
	taken := map[int]bool{}
	known := map[int]bool{}
	for _, r := range ranks {
		known[r] = true
	}
	hops := slices.Clone(v.Spread)
	if v.Carrier != nil {
		hops = append([]verdict.Hop{*v.Carrier}, hops...)
	}
	for _, h := range hops {
		var g []int
		for _, r := range h.Group {
			if known[r] && !taken[r] {
				g = append(g, r)
			}
		}
		if len(g) == 0 {
			continue
		}
		for _, r := range g {
			taken[r] = true
		}
		slices.Sort(g)
		groups = append(groups, g)
	}
	if len(groups) == 0 || (len(groups) == 1 && len(groups[0]) == len(ranks)) {
		return ranks, all
	}
	slices.SortFunc(groups, func(a, b []int) int { return a[0] - b[0] })
	var rest []int
	for _, r := range ranks {
		if !taken[r] {
			rest = append(rest, r)
		}
	}
	order := make([]int, 0, len(ranks))
	var out []GridGroup
	for _, g := range groups {
		out = append(out, GridGroup{Label: "group " + shortList(g), Start: len(order), End: len(order) + len(g)})
		order = append(order, g...)
	}
	if len(rest) > 0 {
		out = append(out, GridGroup{Label: "no group", Start: len(order), End: len(order) + len(rest)})
		order = append(order, rest...)
	}
	return order, out
}

// shortList writes ranks as ranges, cut short for a label, with their
// number when cut.
func shortList(ranks []int) string {
	const max = 12
	s := intranges.Format(ranks)
	if len(s) <= max {
		return s
	}
	cut := strings.LastIndexByte(s[:max], ',')
	if cut < 0 {
		cut = max
	}
	return fmt.Sprintf("%s,… (%d)", s[:cut], len(ranks))
}

// defaultBucket is the smallest power of two of ranks per row that keeps
// the picture within targetRows rows.
func defaultBucket(groups []GridGroup) int {
	b := 1
	for {
		rows := 0
		for _, g := range groups {
			rows += (g.End - g.Start + b - 1) / b
		}
		if rows <= targetRows || b >= 1<<20 {
			return b
		}
		b *= 2
	}
}

// stepsFromCandidates rebuilds the step states of a verdict that has none:
// the scanned steps are clean up to the origin step, whose ranks are the
// candidates; the steps left unread follow.
func stepsFromCandidates(v *verdict.Verdict) []verdict.StepState {
	ranks := intranges.Format(v.Scanned.Ranks)
	var out []verdict.StepState
	for _, s := range v.Scanned.Steps {
		st := verdict.StepState{Step: s, Status: "clean", Ranks: ranks}
		if v.Anomaly && v.Origin != nil && s == v.Origin.Step {
			st.Status = "anomaly"
			seen := map[int]bool{}
			for _, c := range v.Candidates {
				if c.Step != s || seen[c.Rank] {
					continue
				}
				seen[c.Rank] = true
				role := "seen"
				switch {
				case c.Role == "origin" || c.Role == "not captured" || slices.Contains(v.Origin.Ranks, c.Rank):
					role = "source"
				case c.Role == "received":
					role = "received"
				}
				st.Anomalous = append(st.Anomalous, verdict.RankState{Rank: c.Rank, Role: role, Kind: c.Kind, Op: c.Op, Index: c.Index, Stage: c.Stage, Phase: c.Phase})
			}
			slices.SortFunc(st.Anomalous, func(a, b verdict.RankState) int { return a.Rank - b.Rank })
		}
		out = append(out, st)
	}
	for _, s := range v.Scanned.NotScanned {
		out = append(out, verdict.StepState{Step: s, Status: "not_scanned", Ranks: ranks})
	}
	slices.SortStableFunc(out, func(a, b verdict.StepState) int { return a.Step - b.Step })
	return out
}
