package reference

import "sort"

// stepData is every dumped rank of one step.
type stepData struct {
	step       int
	unreadable bool              // the step folder could not be listed
	dumped     []int             // ranks with a folder, ascending
	notDumped  []int             // ranks of the job without a folder in the step (README 8)
	ranks      map[int]*rankData // by rank, unread ones included
}

func loadStep(sd stepDir) *stepData {
	d := &stepData{step: sd.step, unreadable: sd.unreadable, ranks: map[int]*rankData{}}
	for _, r := range sd.ranks {
		d.dumped = append(d.dumped, r.rank)
		d.ranks[r.rank] = loadRank(r.dir, r.dump, r.rank)
	}
	sort.Ints(d.dumped)
	return d
}

// read returns the rank's data when its dump.json could be used.
func (d *stepData) read(rank int) *rankData {
	r := d.ranks[rank]
	if r == nil || r.status == fileUnread {
		return nil
	}
	return r
}

// Roles in a step's rows.
const (
	roleSource    = "source"
	roleReceived  = "received"
	roleInherited = "inherited"
	roleLater     = "later"
)

// stepResult is what README section 6 says of one step. The work is
// split by the README's numbered rules: hops.go (6.1), order.go (6.2-6.4),
// origin.go (6.5, 6.6, 6.8 and the rows), carrier.go (6.7).
type stepResult struct {
	data  *stepData
	signs map[int]*sign // the first sign of every rank that has one

	hops    []*hop       // 6.1, in the order their first receiver met them
	late    map[int]bool // 6.3
	sources []int        // 6.4, ascending
	roles   map[int]string
	origin  *stepOrigin
}

// stepOrigin is the origin a step's analysis names.
type stepOrigin struct {
	ranks []int
	main  int
	root  *entry
	kind  string
	phase string

	tie        bool
	captured   bool
	collective bool // the origin is one or more collectives (6.5)
	unread     bool // only receivers were read (6.6)
	weights    bool // 6.8: the previous update wrote it
}

func (r *stepResult) anomalous() bool { return len(r.signs) > 0 }

// signRanks are the ranks with a first sign, ascending.
func (r *stepResult) signRanks() []int {
	out := make([]int, 0, len(r.signs))
	for rank := range r.signs {
		out = append(out, rank)
	}
	sort.Ints(out)
	return out
}

// analyseStep reads every rank's first sign and, when there is one,
// applies the rules of section 6 in the README's order.
func analyseStep(d *stepData) *stepResult {
	res := &stepResult{data: d, signs: map[int]*sign{}}
	for _, rank := range d.dumped {
		rd := d.read(rank)
		if rd == nil {
			continue
		}
		if s := rd.firstSign(); s != nil {
			res.signs[rank] = s
		}
	}
	if len(res.signs) == 0 {
		return res
	}
	res.hops = collectHops(d, res.signs)
	stageReceives(d, res.signs)
	res.late, res.sources = orderCandidates(d, res.signs)
	creditUnseenSources(res.hops, res.sources)
	res.origin = nameOrigin(res)
	res.roles = rowRoles(res)
	return res
}
