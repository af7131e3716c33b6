package trace

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"
)

// errNotSummarised is the error of a rank-step that a summary lists and
// no summary holds: its node stopped before it, or its summary was cut.
type errNotSummarised string

func (e errNotSummarised) Error() string { return string(e) }

// noteRank notes that the node of a summary holds a rank.
func (rs *recordSet) noteRank(n Node, rank int) {
	if n.Index < 0 {
		return
	}
	if rs.nodeRanks[n.Index] == nil {
		rs.nodeRanks[n.Index] = map[int]bool{}
	}
	rs.nodeRanks[n.Index][rank] = true
}

// notSummarised gives the rank-steps a summary lists after the step its
// node stopped at the reason they have no record. When the joined records
// hold the lasting anomaly that stopped it, the verdict rests on no step
// after that one; otherwise (a mark another job left, or the summary of
// the node that left it missing) these rank-steps are unread, and no
// verdict of the join calls them clean.
func (rs *recordSet) notSummarised(file string, h *summaryHeader, end *summaryEnd, listed map[recordKey]bool) {
	if end.StoppedAfter == nil {
		return
	}
	after := *end.StoppedAfter
	why := fmt.Sprintf("%s stopped after step %d, where its own ranks showed an anomaly that lasts", file, after)
	if m := end.Mark; m != nil {
		why = fmt.Sprintf("%s stopped after step %d on a mark of %s (job %q; this summary's job %q)", file, after, m.Node, m.Job, h.Job.ID)
	}
	for k := range listed {
		if held, _ := rs.recs.holds(k); !held && k.step > after {
			rs.lost[k] = why
		}
	}
}

// missingNodes finds the nodes of the launcher's count that sent no
// summary, and the summaries damaged before their header (whose node
// cannot be told).
// The ranks of the job that no summary holds are then expected at every
// step and unread: the ranks the records name (in process groups, or below
// the highest rank, which torch.distributed numbers from 0), and the ranks
// the missing nodes held when where the other nodes' ranks lie tells them.
// A missing node whose ranks cannot be told is named as such.
func (rs *recordSet) missingNodes(count int) {
	var absent []int
	for i := range count {
		if !rs.present[i] {
			absent = append(absent, i)
		}
	}
	if len(absent) == 0 && rs.unheaded == 0 {
		return
	}
	have := map[int]bool{}
	for _, d := range rs.dirs {
		have[d.Rank] = true
	}
	named := withoutSummary(rs.job, have, nil)
	placed, told := placeRanks(rs.nodeRanks, count, absent)
	if told && !placedCover(placed, named) {
		placed, told = nil, false // the layout is not the job's: a rank it does not place has no summary
	}
	rs.unsummarised = withoutSummary(rs.job, have, placed)
	rs.known = sortedKeys(rs.unsummarised)
	rs.missing = missingList(absent, count, placed, rs.unheaded)
	rs.warnMissing(absent, count, told)
}

// withoutSummary are the ranks of the job no summary holds: the ranks the
// records name, those placed on the missing nodes, and every rank below
// the highest of these and of the ranks held (torch.distributed numbers
// ranks from 0), filled in up to maxFilledRank as a step's ranks are.
func withoutSummary(named, have map[int]bool, placed map[int][]int) map[int]bool {
	job := map[int]bool{}
	maps.Copy(job, named)
	maps.Copy(job, have)
	for _, ranks := range placed {
		for _, rk := range ranks {
			job[rk] = true
		}
	}
	top := -1
	for rk := range job {
		top = max(top, rk)
	}
	out := map[int]bool{}
	for rk := range job {
		if rk >= 0 && !have[rk] {
			out[rk] = true
		}
	}
	for rk := range min(top+1, maxFilledRank) {
		if !have[rk] {
			out[rk] = true
		}
	}
	return out
}

// without is ranks less those in drop, in a new slice: in n log n time and
// no more room than the result, for a join whose missing node leaves a
// hundred thousand ranks without a summary.
func without(ranks, drop []int) []int {
	out := make([]int, 0, len(ranks))
	if !slices.IsSorted(drop) {
		drop = slices.Sorted(slices.Values(drop))
	}
	for _, rk := range ranks {
		if _, gone := slices.BinarySearch(drop, rk); !gone {
			out = append(out, rk)
		}
	}
	return out
}

// placedCover reports whether the ranks placed on the missing nodes hold
// every rank in want.
func placedCover(placed map[int][]int, want map[int]bool) bool {
	in := map[int]bool{}
	for _, ranks := range placed {
		for _, rk := range ranks {
			in[rk] = true
		}
	}
	for rk := range want {
		if !in[rk] {
			return false
		}
	}
	return true
}

// missingList is the verdict's list of missing nodes.
func missingList(absent []int, count int, placed map[int][]int, unheaded int) []verdict.MissingNode {
	var out []verdict.MissingNode
	for _, n := range absent {
		ranks := slices.Clone(placed[n])
		if ranks == nil {
			ranks = []int{}
		}
		out = append(out, verdict.MissingNode{Node: n, Of: count, Ranks: ranks, Why: "no summary"})
	}
	for range unheaded {
		out = append(out, verdict.MissingNode{Node: -1, Of: count, Ranks: []int{}, Why: "its summary could not be read"})
	}
	return out
}

// warnMissing says which nodes and ranks are missing, in the warnings and
// as a reason that lowers the confidence of an origin.
func (rs *recordSet) warnMissing(absent []int, count int, told bool) {
	what := "their ranks are unknown"
	switch ranks := notation.FormatRanges(rs.known); {
	case len(rs.known) > 0 && told:
		what = "ranks " + ranks + " of the job have no summary"
	case len(rs.known) > 0:
		what = "ranks " + ranks + " of the job have no summary, and which ranks the missing nodes held cannot be told"
	}
	who := "a summary that could not be read"
	if len(absent) > 0 {
		who = fmt.Sprintf("node(s) %s of %d", notation.FormatRanges(absent), count)
		rs.warnings = append(rs.warnings, fmt.Sprintf("no summary from %s: %s", who, what))
	}
	rs.lower = append(rs.lower, fmt.Sprintf("no summary from %s (%s): one of their ranks may have made it first", who, what))
}

// placeRanks tells the ranks of the missing nodes from where the others'
// lie: when every node that sent a summary holds the same number R of
// ranks, laid out in blocks (node k holds ranks kR to kR+R-1, as torchrun
// numbers them and Slurm's block distribution places them) or in turn
// (node k of N holds k, k+N, k+2N…, a cyclic distribution), the missing
// nodes hold theirs the same way. told is false when no layout fits every
// node, or two fit and disagree.
func placeRanks(held map[int]map[int]bool, count int, missing []int) (placed map[int][]int, told bool) {
	perNode := -1
	for _, ranks := range held {
		if perNode >= 0 && len(ranks) != perNode {
			return nil, false
		}
		perNode = len(ranks)
	}
	if perNode <= 0 || count <= 0 || len(missing)*perNode > maxFilledRank {
		return nil, false // (more ranks than a job has: a layout that says nothing)
	}
	layouts := []func(node, i int) int{
		func(node, i int) int { return node*perNode + i },
		func(node, i int) int { return node + i*count },
	}
	for _, at := range layouts {
		if !layoutFits(held, perNode, at) {
			continue
		}
		got := map[int][]int{}
		for _, n := range missing {
			for i := range perNode {
				got[n] = append(got[n], at(n, i))
			}
		}
		if placed != nil && !maps.EqualFunc(placed, got, slices.Equal) {
			return nil, false
		}
		placed = got
	}
	return placed, placed != nil
}

// layoutFits reports whether every node holds exactly the ranks a layout
// gives it.
func layoutFits(held map[int]map[int]bool, perNode int, at func(node, i int) int) bool {
	for n, ranks := range held {
		for i := range perNode {
			if !ranks[at(n, i)] {
				return false
			}
		}
	}
	return true
}

// selectedMissing are the missing nodes that may hold a rank of the
// selection (nil: all ranks): those whose ranks cannot be told, and those
// holding a selected rank.
func selectedMissing(nodes []verdict.MissingNode, selected map[int]bool) []verdict.MissingNode {
	if selected == nil {
		return nodes
	}
	var out []verdict.MissingNode
	for _, n := range nodes {
		if len(n.Ranks) == 0 || slices.ContainsFunc(n.Ranks, func(rk int) bool { return selected[rk] }) {
			out = append(out, n)
		}
	}
	return out
}

// unknownRanks reports whether a missing node's ranks cannot be told.
func unknownRanks(nodes []verdict.MissingNode) bool {
	return slices.ContainsFunc(nodes, func(n verdict.MissingNode) bool { return len(n.Ranks) == 0 })
}

// notWholeWords names what of a step was not read whole: its unread rows,
// and in a join the ranks of the nodes that sent no summary.
func (m *modeResult) notWholeWords(rows []verdict.UnreadRanks) string {
	words := ranklist.UnreadWords(rows)
	if len(m.missingNodes) == 0 {
		return words
	}
	nodes := "the ranks of " + ranklist.MissingWords(m.missingNodes)
	if words == "" {
		return nodes
	}
	return words + " and " + nodes
}
