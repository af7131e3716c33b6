package watch

import "sort"

// stepSet is a set of steps kept as ascending, disjoint runs: the steps a
// watch has checked are mostly consecutive, so it stays a few runs long
// however long the job is.
type stepSet []stepRun

type stepRun struct{ from, to int } // inclusive

// add puts s in the set.
func (ss *stepSet) add(s int) {
	runs := *ss
	i := sort.Search(len(runs), func(i int) bool { return runs[i].to >= s-1 })
	switch {
	case i < len(runs) && runs[i].from <= s && s <= runs[i].to:
		return // in already
	case i < len(runs) && runs[i].to == s-1:
		runs[i].to = s
		if i+1 < len(runs) && runs[i+1].from == s+1 { // joins the next run
			runs[i].to = runs[i+1].to
			runs = append(runs[:i+1], runs[i+2:]...)
		}
	case i < len(runs) && runs[i].from == s+1:
		runs[i].from = s
	default:
		runs = append(runs, stepRun{})
		copy(runs[i+1:], runs[i:])
		runs[i] = stepRun{s, s}
	}
	*ss = runs
}

// has reports whether s is in the set.
func (ss stepSet) has(s int) bool {
	i := sort.Search(len(ss), func(i int) bool { return ss[i].to >= s })
	return i < len(ss) && ss[i].from <= s
}

// around are the greatest step of the set below s and the least above it
// (nil when there is none).
func (ss stepSet) around(s int) (before, after *int) {
	i := sort.Search(len(ss), func(i int) bool { return ss[i].to >= s })
	if i > 0 {
		b := ss[i-1].to
		before = &b
	}
	if i < len(ss) && ss[i].from < s {
		b := s - 1
		before = &b
	}
	switch {
	case i < len(ss) && ss[i].from > s:
		a := ss[i].from
		after = &a
	case i < len(ss) && ss[i].to > s:
		a := s + 1
		after = &a
	case i+1 < len(ss):
		a := ss[i+1].from
		after = &a
	}
	return before, after
}

// empty reports whether the set holds no step.
func (ss stepSet) empty() bool { return len(ss) == 0 }
