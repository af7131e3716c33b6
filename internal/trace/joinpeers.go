package trace

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"
)

// A node's records are checked against its peers' collectives, with what
// the records of a step hold anyway: the non-finite collectives each rank
// kept, their pairing keys and process groups, and whether each rank's side
// of a call was read. Two contradictions are cheap to tell and cannot come
// from records that summarize wrote of a dump it read:
//
//   - A collective that gives every rank of it the same values (all_reduce,
//     all_gather, broadcast) that some rank received NaN or +Inf from, one
//     of them without having sent it (so the call finished there), while
//     another rank of it says it received finite values, or holds no such
//     call although its side of it was read (its file read past that call,
//     its cap of kept collectives not reached).
//   - A rank received NaN or +Inf by a blocking recv from a peer whose
//     record, read whole, holds no call that sent a non-finite value.
//
// Records that cannot say are never taken as saying "finite": a rank not
// read, not dumped, or not in the step's records read (a checking read
// stops at the first anomaly); a damaged file before that call; a rank
// past its cap of kept collectives; a group whose ranks are not recorded
// (its calls are joined only by name); a call without a group in a step
// whose records hold no process group at all (a writer that does not record
// groups joins the calls of different groups there, and a world-only run
// looks the same); dumps that record only some calls (task
// overflow_check, nan_check). The check only lowers the confidence and
// says why: which record lies cannot be told.

// severeClass is what the check compares: NaN and +Inf, severe wherever
// they are (-inf in a forward call may be cleared by the byte search).
const severeClass = nonfinite.NaN | nonfinite.PosInf

// maxContradictions bounds the contradictions a mode's warnings name one
// by one; the others are counted.
const maxContradictions = 8

// contradiction is two sides of the records of one step that cannot both
// be true, in one or more calls.
type contradiction struct {
	step    int
	ops     []string // the calls, as the first rank holding each names it
	class   nonfinite.Class
	got     []int // ranks that received the value
	denied  []int // ranks whose records say otherwise
	deniers []string
	p2p     bool // got received from denied by a recv
	file    int32
}

// maxOpsNamed bounds the calls a contradiction names; the others are
// counted.
const maxOpsNamed = 3

// lateFindings are what the join learns of the summaries only when it
// reads the records of a step: contradictions between them, and records
// that could not be read again. They are warnings and lower the
// confidence, mode by mode.
type lateFindings struct {
	warnings []verdict.Warning
	lower    []string
	count    int // contradictions, named or not
	broken   int // records that could not be read again, named or not
}

// late returns the findings of a mode, made when first asked for.
func (rs *recordSet) late(mode string) *lateFindings {
	if rs.findings == nil {
		rs.findings = map[string]*lateFindings{}
	}
	f := rs.findings[mode]
	if f == nil {
		f = &lateFindings{}
		rs.findings[mode] = f
	}
	return f
}

// lateFor returns the warnings and the reasons that lower the confidence
// that reading the records of a mode's steps gave.
func (rs *recordSet) lateFor(mode string) ([]verdict.Warning, []string) {
	f := rs.findings[mode]
	if f == nil {
		return nil, nil
	}
	lower := slices.Clip(f.lower)
	if n := f.count - maxContradictions; n > 0 {
		lower = append(lower, fmt.Sprintf("%d more contradictions between the summaries", n))
	}
	if n := f.broken - maxContradictions; n > 0 {
		lower = append(lower, fmt.Sprintf("%d more records of the summaries cannot be read", n))
	}
	return f.warnings, lower
}

// checkPeers checks the records of one step against each other (files are
// the summaries they came from, by rank) and notes each contradiction.
func (rs *recordSet) checkPeers(mode string, step int, scans map[int]*rankScan, files map[int]int32) {
	ranks := sortedKeys(scans)
	for _, rk := range ranks {
		if !recordsEveryCall(scans[rk].header.Task) {
			return // a dump that records only some calls: a call it lacks says nothing
		}
	}
	found := append(sameResultContradictions(step, ranks, scans), recvContradictions(step, ranks, scans)...)
	for _, c := range merged(found) {
		rs.note(mode, c, files)
	}
}

// merged makes one contradiction of those between the same sides (an edit
// of one record contradicts every call it took part in), in order.
func merged(cs []contradiction) []contradiction {
	var out []contradiction
	at := map[string]int{}
	for _, c := range cs {
		k := fmt.Sprint(c.p2p, c.got, c.denied)
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
			out = append(out, c)
			continue
		}
		out[i].ops = append(out[i].ops, c.ops...)
		out[i].class |= c.class
	}
	return out
}

// recordsEveryCall reports whether a dump of this task records every call
// it hooks: statistics and tensor dumps, and files whose header was not
// read (a file the byte search cleared).
func recordsEveryCall(task string) bool {
	return task == "" || task == "statistics" || task == "tensor"
}

// sameResult reports whether an API gives every rank of a call the same
// values.
func sameResult(api string) bool {
	switch strings.TrimPrefix(api, "npu_") {
	case "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "_all_gather_base":
		return true
	}
	return false
}

// instanceSides is what the records of a step say of one call.
type instanceSides struct {
	c       *collEvent // the side of the first rank that holds it
	got     []int      // ranks that received NaN or +Inf
	class   nonfinite.Class
	arrived bool  // one of them received it without sending it
	finite  []int // ranks that hold it and received finite values
}

// sameResultContradictions finds the calls that give every rank the same
// values on which the records of the step disagree.
func sameResultContradictions(step int, ranks []int, scans map[int]*rankScan) []contradiction {
	world := groupsRecorded(ranks, scans) // a call without a group is on the world group
	byKey := map[string]*instanceSides{}
	var keys []string
	for _, rk := range ranks {
		s := scans[rk]
		for i := range s.colls {
			c := &s.colls[i]
			if !sameResult(c.api) || c.named || (c.group == nil && (c.groupKey != "" || !world)) || occurrence(c.key) < 0 {
				continue // its ranks are not known
			}
			in := byKey[c.key]
			if in == nil {
				in = &instanceSides{c: c}
				byKey[c.key] = in
				keys = append(keys, c.key)
			}
			if c.dest&severeClass == 0 {
				in.finite = append(in.finite, rk)
				continue
			}
			in.got, in.class = append(in.got, rk), in.class|c.dest
			in.arrived = in.arrived || c.send&severeClass == 0
		}
	}
	var out []contradiction
	for _, k := range keys {
		in := byKey[k]
		if len(in.got) == 0 || !in.arrived {
			continue
		}
		denied := append(slices.Clone(in.finite), withoutCall(in, ranks, scans)...)
		if len(denied) > 0 {
			out = append(out, contradiction{step: step, ops: []string{in.c.name}, class: in.class, got: in.got, denied: ranklist.Unique(denied)})
		}
	}
	return out
}

// groupsRecorded reports whether the records of a step hold a process
// group with its ranks: the dump's writer records the group of every call
// that is not on the world group (msprobe since 2024-11).
func groupsRecorded(ranks []int, scans map[int]*rankScan) bool {
	for _, rk := range ranks {
		if len(scans[rk].groups) > 0 {
			return true
		}
	}
	return false
}

// withoutCall are the ranks of a call, other than those that hold it,
// whose records were read past it and hold no such call.
func withoutCall(in *instanceSides, ranks []int, scans map[int]*rankScan) []int {
	members := in.c.group
	if members == nil {
		members = ranks // the default group: every rank of the step
	}
	holds := make(map[int]bool, len(in.got)+len(in.finite)) // thousands of ranks a call
	for _, p := range in.got {
		holds[p] = true
	}
	for _, p := range in.finite {
		holds[p] = true
	}
	var out []int
	for _, p := range members {
		if holds[p] {
			continue
		}
		if s, ok := scans[p]; ok && readPast(s, in.c) {
			out = append(out, p)
		}
	}
	return out
}

// readPast reports whether a rank's record would hold the call if the
// rank had received a non-finite value from it: its file was read past it
// and no cap left it out.
func readPast(s *rankScan, c *collEvent) bool {
	switch {
	case s.unread(), s.stopped, s.collsFull:
		return false
	case s.damage != nil:
		return s.seen != nil && s.seen[c.base] > int32(occurrence(c.key))
	}
	return true
}

// recvContradictions finds the blocking receives of NaN or +Inf from a
// peer whose record, read whole, sent none.
func recvContradictions(step int, ranks []int, scans map[int]*rankScan) []contradiction {
	var out []contradiction
	for _, rk := range ranks {
		s := scans[rk]
		for i := range s.colls {
			c := &s.colls[i]
			if strings.TrimPrefix(c.api, "npu_") != "recv" || c.p2p != -1 || c.peer < 0 || c.peer == rk || c.dest&severeClass == 0 {
				continue
			}
			if from, ok := scans[c.peer]; ok && readWhole(from) && !sentAny(from) {
				out = append(out, contradiction{step: step, ops: []string{c.name}, class: c.dest, got: []int{rk}, denied: []int{c.peer}, p2p: true})
			}
		}
	}
	return out
}

// readWhole reports whether a rank's record holds every non-finite call of
// its file.
func readWhole(s *rankScan) bool {
	return !s.unread() && !s.stopped && !s.collsFull && s.damage == nil
}

// sentAny reports whether a rank sent a non-finite value by a call that
// may carry it to a recv: a send, a batch, or an API the rule set does not
// know.
func sentAny(s *rankScan) bool {
	for i := range s.colls {
		c := &s.colls[i]
		if c.send&severeClass != 0 && (c.p2p != 0 || policy.Collective(c.api).Unknown) {
			return true
		}
	}
	return false
}

// note records a contradiction of a mode: a warning naming it (the first
// maxContradictions), and a reason that lowers the confidence (the first).
func (rs *recordSet) note(mode string, c contradiction, files map[int]int32) {
	f := rs.late(mode)
	f.count++
	if f.count > maxContradictions {
		return
	}
	var names []string
	for _, rk := range c.denied {
		if name := filepath.Base(rs.names[files[rk]]); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	c.deniers, c.file = names, files[c.denied[0]]
	f.warnings = append(f.warnings, verdict.Warning{File: rs.names[c.file], Message: c.message()})
	if f.count == 1 {
		f.lower = append(f.lower, fmt.Sprintf("the summaries contradict each other at step %d (%s against %s): a summary was edited or damaged after it was written, and the verdict may rest on it",
			c.step, ranklist.Name(c.denied), ranklist.Name(c.got)))
	}
}

// message says what the records of the two sides say.
func (c contradiction) message() string {
	what := "NaN"
	if c.class&nonfinite.NaN == 0 {
		what = "Inf"
	}
	deniers := fmt.Sprintf("%s (%s)", ranklist.Name(c.denied), strings.Join(c.deniers, ", "))
	if c.p2p {
		return fmt.Sprintf("step %d: the summaries contradict each other: %s received %s from %s by %s, and the record of %s holds no call that sent a non-finite value; a summary was edited or damaged after it was written",
			c.step, ranklist.Name(c.got), what, ranklist.Name(c.denied), opsWords(c.ops), deniers)
	}
	return fmt.Sprintf("step %d: the summaries contradict each other: %s received %s from %s, which give%s every rank of a call the same values, and the records of %s say %s gave them finite values or hold no such call although they were read past it; a summary was edited or damaged after it was written",
		c.step, ranklist.Name(c.got), what, opsWords(c.ops), plural(len(c.ops), "s", ""), deniers, plural(len(c.ops), "it", "they"))
}

// opsWords names calls: the first maxOpsNamed, and how many more.
func opsWords(ops []string) string {
	if len(ops) <= maxOpsNamed {
		return strings.Join(ops, ", ")
	}
	return fmt.Sprintf("%s and %d more calls", strings.Join(ops[:maxOpsNamed], ", "), len(ops)-maxOpsNamed)
}

// addLate adds to a mode's result what reading the records of its steps
// found wrong with them: warnings, and reasons that lower the confidence.
func (m *modeResult) addLate(rs *recordSet, mode string) {
	w, lower := rs.lateFor(mode)
	m.warnings = append(m.warnings, w...)
	m.lower = slices.Concat(m.lower, lower)
}
