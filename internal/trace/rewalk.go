package trace

import (
	"errors"
	"fmt"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/safeio"
)

// A rank scan keeps the names of the entries after the latest backward
// entry and the ops before the first one up to a limit each; past it, the
// phases read the names they need again from the file (the fallbacks of
// those limits), skipping every entry unparsed.

// names reads the entry names of a rank's dump.json again, in order, and
// calls fn with each name and index until fn returns false or the file
// ends (at its end, or at its damage, where the scan stopped too).
func (sc *scanner) names(s *rankScan, fn func(name string, index int) bool) error {
	f, err := safeio.Open(s.dir.Dump)
	if err != nil {
		return err
	}
	defer f.Close()
	skip := func(string, int64) bool { return false }
	rd := dump.NewReader(f, dump.ReaderOptions{WindowSize: windowFor(s.bytes), Select: skip, Indent: s.indent})
	for rd.Next() {
		if e := rd.Entry(); !fn(e.Name, e.Index) {
			return nil
		}
	}
	var fe *dump.FormatError
	if err := rd.Err(); err != nil && !errors.As(err, &fe) {
		return err
	}
	return nil
}

// eachTail calls fn with the entries after the last backward entry (every
// entry of a file without one), in order, until fn returns false: those
// the scan kept, or, when there were more than it keeps, read again.
func (sc *scanner) eachTail(s *rankScan, fn func(name string, index int) bool) {
	if !s.tailCut {
		for _, t := range s.tail {
			if !fn(t.name, int(t.index)) {
				return
			}
		}
		return
	}
	reached.tail.Add(1)
	err := sc.names(s, func(name string, index int) bool { return index <= s.lastBwd || fn(name, index) })
	if err != nil {
		s.noteInexact(fmt.Sprintf("the names after its last backward entry could not be read again for the phases: %v", err))
	}
}

// opsBefore completes what the scan kept of the ops before the first
// backward entry with the ops of the given calls between the backward
// entries, when it kept only some: it reads the names before the first
// backward entry again.
func (sc *scanner) opsBefore(s *rankScan, evs []*event) {
	if !s.preOpsCut {
		return
	}
	want := map[string]bool{}
	for _, ev := range evs {
		if op := dump.ParseName(ev.name).Op(); s.region(ev) == betweenBackward && !s.preOps[op] {
			want[op] = true
		}
	}
	if len(want) == 0 {
		return
	}
	reached.preOps.Add(1)
	err := sc.names(s, func(name string, index int) bool {
		if op := dump.ParseName(name).Op(); index < s.firstBwd && want[op] {
			s.preOps[op] = true
		}
		return index < s.firstBwd
	})
	if err != nil {
		s.noteInexact(fmt.Sprintf("the calls before its first backward entry could not be read again for the phases: %v", err))
	}
}
