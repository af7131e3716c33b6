package trace

import (
	"sort"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/verdict"
)

// suppressions gathers what the exclusions did across ranks and steps.
type suppressions struct {
	byKey map[suppressKey]*suppAgg
	order []suppressKey
}

type suppAgg struct {
	steps, ranks map[int]bool
	count        int
	example      string
	birth        bool
}

func newSuppressions() *suppressions { return &suppressions{byKey: map[suppressKey]*suppAgg{}} }

func (s *suppressions) add(k suppressKey, step, rank, count int, example string, birth bool) {
	a := s.byKey[k]
	if a == nil {
		a = &suppAgg{steps: map[int]bool{}, ranks: map[int]bool{}, example: example}
		s.byKey[k] = a
		s.order = append(s.order, k)
	}
	a.steps[step] = true
	a.ranks[rank] = true
	a.count += count
	a.birth = a.birth || birth
}

// addStep records a step's exclusions, and the -inf births that never grew
// into an anomaly (listed so that a user sees them, not counted as origins).
func (s *suppressions) addStep(r *stepResult) {
	for _, rank := range r.ranks {
		sc := r.scans[rank]
		for _, x := range sc.suppressed {
			s.add(x.suppressKey, r.step, rank, x.count, x.first, x.birth)
		}
		l := r.locals[rank]
		for _, b := range l.births {
			if b == l.root || b.birth != nonfinite.NegInf || (l.first != nil && b.index > l.first.index) {
				continue
			}
			s.add(suppressKey{op: dump.ParseName(b.name).Op(), reason: "-inf that never became NaN or +Inf, nor reached a gradient, a weight or a collective (treated as a mask)", values: nonfinite.NegInf},
				r.step, rank, 1, b.name, true)
		}
	}
}

func (s *suppressions) list() []verdict.Suppressed {
	out := []verdict.Suppressed{}
	for _, k := range s.order {
		a := s.byKey[k]
		out = append(out, verdict.Suppressed{
			Op: k.op, Reason: k.reason, Values: k.values.String(),
			Steps: setList(a.steps), Ranks: setList(a.ranks), Count: a.count,
			Example: a.example, WouldBeOrigin: a.birth,
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].WouldBeOrigin && !out[j].WouldBeOrigin })
	return out
}

func setList(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
