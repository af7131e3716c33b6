package trainlog

import "sort"

// ivset is a set of integers kept as sorted, disjoint, non-adjacent closed
// intervals. Iterations mostly arrive in order, so adding is usually an
// append or a change of the last interval, and memory grows with the number
// of gaps, not of members.
type ivset struct {
	iv [][2]int
}

// add puts x in the set.
func (s *ivset) add(x int) {
	n := len(s.iv)
	if n > 0 {
		last := &s.iv[n-1]
		switch {
		case x >= last[0] && x <= last[1]:
			return
		case x == last[1]+1:
			last[1] = x
			return
		case x > last[1]+1:
			s.iv = append(s.iv, [2]int{x, x})
			return
		}
	}
	// i is the first interval ending at or after x-1.
	i := sort.Search(n, func(i int) bool { return s.iv[i][1] >= x-1 })
	if i < n && s.iv[i][0] <= x+1 {
		// x touches or lies in interval i.
		if x >= s.iv[i][0] && x <= s.iv[i][1] {
			return
		}
		if x < s.iv[i][0] {
			s.iv[i][0] = x
		} else {
			s.iv[i][1] = x
		}
		// Interval i may now touch i+1.
		if i+1 < len(s.iv) && s.iv[i][1]+1 >= s.iv[i+1][0] {
			s.iv[i][1] = s.iv[i+1][1]
			s.iv = append(s.iv[:i+1], s.iv[i+2:]...)
		}
		return
	}
	s.iv = append(s.iv, [2]int{})
	copy(s.iv[i+1:], s.iv[i:])
	s.iv[i] = [2]int{x, x}
}

// has reports whether x is in the set.
func (s *ivset) has(x int) bool {
	i := sort.Search(len(s.iv), func(i int) bool { return s.iv[i][1] >= x })
	return i < len(s.iv) && s.iv[i][0] <= x
}

// maxBelow returns the largest member smaller than x.
func (s *ivset) maxBelow(x int) (int, bool) {
	// i is the first interval starting at or after x.
	i := sort.Search(len(s.iv), func(i int) bool { return s.iv[i][0] >= x })
	if i == 0 {
		return 0, false
	}
	return min(s.iv[i-1][1], x-1), true
}

// max returns the largest member.
func (s *ivset) max() (int, bool) {
	if len(s.iv) == 0 {
		return 0, false
	}
	return s.iv[len(s.iv)-1][1], true
}

// union adds every member of o to s.
func (s *ivset) union(o *ivset) {
	if len(o.iv) == 0 {
		return
	}
	all := make([][2]int, 0, len(s.iv)+len(o.iv))
	i, j := 0, 0
	for i < len(s.iv) || j < len(o.iv) {
		var next [2]int
		if j >= len(o.iv) || (i < len(s.iv) && s.iv[i][0] <= o.iv[j][0]) {
			next = s.iv[i]
			i++
		} else {
			next = o.iv[j]
			j++
		}
		if n := len(all); n > 0 && next[0] <= all[n-1][1]+1 {
			all[n-1][1] = max(all[n-1][1], next[1])
			continue
		}
		all = append(all, next)
	}
	s.iv = all
}

// min returns the smallest member.
func (s *ivset) min() (int, bool) {
	if len(s.iv) == 0 {
		return 0, false
	}
	return s.iv[0][0], true
}
