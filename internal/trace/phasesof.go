package trace

import (
	"context"
	"errors"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/safeio"
)

// PhasesOf places the calls at the given indices of one rank's dump.json
// in the step's phases, by the same model as Run (README "How it decides",
// 4): for a report that shows calls the verdict does not name. It reads the
// file once, skipping every entry unparsed, then the side files the phase
// model needs. A damaged file gives the phases of the calls before the
// damage and its error.
func PhasesOf(ctx context.Context, rd dump.RankDir, indices []int) (map[int]policy.Phase, error) {
	f, err := safeio.Open(rd.Dump)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := newScanner(policy.Default(), nil)
	s := newRankScan(rd)
	want := map[int]bool{}
	for _, i := range indices {
		want[i] = true
	}
	var evs []*event
	next := 0 // the index of the entry Select is asked about
	parse := func(string, int64) bool {
		next++
		return want[next-1] // only the wanted calls: is_recompute is in their bytes
	}
	r := dump.NewReader(&ctxReader{ctx: ctx, r: f}, dump.ReaderOptions{Select: parse})
	for r.Next() {
		e := r.Entry()
		n := dump.ParseName(e.Name)
		s.place(sc, e, n)
		if want[e.Index] {
			ev := &event{index: e.Index, name: e.Name, dir: passOf(n), module: n.Module, collIdx: -1, recompute: e.Recompute}
			if n.IsDistributed() {
				ev.collIdx = 0 // a collective: its phase does not depend on what it holds
			}
			evs = append(evs, ev)
		}
	}
	s.header = r.Header()
	rerr := r.Err()
	var fe *dump.FormatError
	if rerr != nil && !errors.As(rerr, &fe) {
		return nil, rerr
	}
	sc.phases(s, evs)
	out := make(map[int]policy.Phase, len(evs))
	for _, ev := range evs {
		out[ev.index] = ev.phase
	}
	return out, rerr
}
