package policy

import (
	"fmt"
	"path"
)

// Policy is the compiled rule set: the built-in exclusions and the user's.
// It is immutable and may be shared; each goroutine takes a Matcher.
type Policy struct {
	rules []Rule
}

// New compiles the built-in rules followed by the user's.
func New(user []Rule) (*Policy, error) {
	rules := Builtin()
	for i, r := range user {
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("rule %d: %w", i+1, err)
		}
		rules = append(rules, r)
	}
	return &Policy{rules: rules}, nil
}

// Default is the policy without user rules.
func Default() *Policy {
	p, _ := New(nil)
	return p
}

// Rules returns every rule, built-in ones first.
func (p *Policy) Rules() []Rule { return p.rules }

// Matcher finds the rules of an op, remembering the answer per op. It is
// not safe for concurrent use.
type Matcher struct {
	p    *Policy
	byOp map[string][]*Rule
}

// Matcher returns a new Matcher of the policy.
func (p *Policy) Matcher() *Matcher {
	return &Matcher{p: p, byOp: map[string][]*Rule{}}
}

// maxCachedOps bounds the per-op cache; beyond it, answers are computed
// each time.
const maxCachedOps = 1 << 14

// ForOp returns the rules whose glob matches op ("Torch.empty").
func (m *Matcher) ForOp(op string) []*Rule {
	if rs, ok := m.byOp[op]; ok {
		return rs
	}
	var rs []*Rule
	for i := range m.p.rules {
		if ok, _ := path.Match(m.p.rules[i].Op, op); ok {
			rs = append(rs, &m.p.rules[i])
		}
	}
	if len(m.byOp) < maxCachedOps {
		m.byOp[op] = rs
	}
	return rs
}
