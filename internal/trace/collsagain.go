package trace

import (
	"errors"
	"fmt"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/safeio"
)

// A rank scan keeps its first non-finite collectives whole, up to a limit
// (scanLimits.colls); which of the others the step needs is known only
// once every rank is read: its side of each instance that is another
// rank's first sign (a hop), to tell whether it sent the value. Those are
// read again from its file. Where that cannot be done (a joined summary
// without its dump, a file that changed since), the rank is noted, the
// verdict warns, and a rank that held an anomaly is taken for a sender
// (beyondCap).

// sendersAgain reads again, from the dump.json of each rank that kept only
// its first non-finite collectives, its side of the hops' instances it did
// not keep, and keeps those that sent or received a non-finite value.
func (r *stepResult) sendersAgain() {
	need := map[int]map[string]bool{} // rank -> pairing keys
	for _, rank := range r.ranks {
		l := r.locals[rank]
		if l.role != roleReceived {
			continue
		}
		c := r.scans[rank].collOf(l.first)
		for _, p := range r.participants(c) {
			s, ok := r.scans[p]
			if !ok || !s.collsFull || s.collsLost || s.collByKey(c.key) != nil {
				continue
			}
			if need[p] == nil {
				need[p] = map[string]bool{}
			}
			need[p][c.key] = true
		}
	}
	for _, p := range sortedKeys(need) {
		s := r.scans[p]
		found, err := collsAgain(s, need[p])
		if err != nil {
			s.collsLost = true
			s.noteInexact(fmt.Sprintf("more non-finite collectives than a scan keeps, and the file could not be read again for them (%v): "+
				"whether it sent in the collectives past the first %d is inferred", err, s.lim.colls))
			continue
		}
		reached.collsAgain.Add(1)
		s.colls = append(s.colls, found...)
	}
}

// collsAgain reads a rank's dump.json again, parsing only its collectives,
// for its side of the given instances (pairing keys), and returns those of
// them that sent or received a non-finite value.
func collsAgain(s *rankScan, keys map[string]bool) ([]collEvent, error) {
	f, err := safeio.Open(s.dir.Dump)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if id, err := safeio.IdentityOf(f); err != nil || (s.ident != (safeio.Identity{}) && id != s.ident) {
		return nil, errors.New("it changed since it was read")
	}
	parse := func(name string, _ int64) bool { return policy.IsCollective(name) }
	rd := dump.NewReader(f, dump.ReaderOptions{WindowSize: windowFor(s.bytes), Select: parse, Indent: s.indent})
	seen := map[string]int{}
	var out []collEvent
	for left := len(keys); left > 0 && rd.Next(); {
		e := rd.Entry()
		n := dump.ParseName(e.Name)
		if e.Skipped || !n.IsDistributed() {
			continue
		}
		ce := readCollective(e, n, s.dir.Rank, seen)
		if !keys[ce.key] {
			continue
		}
		left--
		if ce.send|ce.dest != 0 {
			out = append(out, ce)
		}
	}
	var fe *dump.FormatError
	if err := rd.Err(); err != nil && !errors.As(err, &fe) {
		return nil, err
	}
	return out, nil
}
