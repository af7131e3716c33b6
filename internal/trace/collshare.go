package trace

import (
	"slices"
	"sync"
	"unique"
)

// collShare makes the collectives of one step's ranks share what is the
// same on each of them (collWhere, and the call names): a step of 4,096
// ranks whose every rank kept its 64 non-finite collectives holds a
// quarter of a million of them. It is safe for concurrent use.
type collShare struct {
	mu    sync.Mutex
	byKey map[string][]*collWhere
}

// share points the collectives of s at the shared copies, adding those
// not seen yet.
func (t *collShare) share(s *rankScan) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byKey == nil {
		t.byKey = map[string][]*collWhere{}
	}
	for i := range s.colls {
		c := &s.colls[i]
		c.name = unique.Make(c.name).Value()
		c.collWhere = t.one(c.collWhere)
	}
}

// one returns the shared collWhere equal to w, or makes w the shared one.
func (t *collShare) one(w *collWhere) *collWhere {
	for _, had := range t.byKey[w.key] {
		if had.api == w.api && had.base == w.base && had.groupKey == w.groupKey && slices.Equal(had.group, w.group) &&
			(had.group == nil) == (w.group == nil) {
			return had
		}
	}
	w.api, w.key, w.base = unique.Make(w.api).Value(), unique.Make(w.key).Value(), unique.Make(w.base).Value()
	w.groupKey = unique.Make(w.groupKey).Value()
	t.byKey[w.key] = append(t.byKey[w.key], w)
	return w
}
