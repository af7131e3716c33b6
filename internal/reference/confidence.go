package reference

import "slices"

// Confidence levels, lowest first.
var levels = []string{"low", "medium", "high"}

// confidence is README section 8: high, lowered for each reason.
func (a *analysis) confidence(res *stepResult, firstDumped bool) string {
	level := 2
	lower := func(l int) { level = min(level, l) }
	o := res.origin
	if !o.captured {
		lower(0)
		if firstDumped {
			lower(0)
		}
	}
	if o.unread {
		lower(0)
	}
	for _, rank := range o.ranks {
		if s := res.signs[rank]; s != nil && s.promoted {
			lower(1)
		}
	}
	if o.tie {
		lower(1)
	}
	if s := res.signs[o.main]; s != nil && s.rootRole == signFlagged {
		lower(1)
	}
	for _, role := range res.roles {
		if role == roleInherited {
			lower(1)
		}
	}
	d := res.data
	// "low when the main rank's file ends before its root" cannot apply
	// here: a root is always among the entries that were read.
	for _, rank := range d.dumped {
		if d.ranks[rank].status != fileRead {
			lower(1)
		}
	}
	if len(d.notDumped) > 0 {
		lower(1)
	}
	if rd := d.read(o.main); rd != nil && rd.statlessMost() {
		lower(1)
	}
	for _, u := range a.unread {
		if u.Step < d.step {
			lower(1) // README 8: an older anomaly cannot be ruled out
		}
	}
	if a.undecided {
		lower(1) // README 9: whether it lasted cannot be told
	}
	return levels[level]
}

// notDumped are the ranks of the job (README 9) without a folder in the
// step.
func (a *analysis) notDumped(d *stepData) []int {
	var out []int
	for _, r := range a.jobRanks(d) {
		if !slices.Contains(d.dumped, r) {
			out = append(out, r)
		}
	}
	return out
}
