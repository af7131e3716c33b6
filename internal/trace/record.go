package trace

import (
	"errors"
	"maps"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/fsjson"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// record is a finished rank scan as a summary holds it: everything the
// step analysis reads of a rank, and nothing of its files. Paths are
// relative to the dump root, byte for byte (fsjson: a name on disk need
// not be UTF-8). A rank scan turns into a record and back without loss
// (toRecord, fromRecord), which is what makes a joined verdict the verdict
// of the rank folders in one place.
type record struct {
	Mode      string        `json:"mode,omitempty"`
	Step      int           `json:"step"`
	Rank      int           `json:"rank"`
	Dir       fsjson.String `json:"dir"`
	Dump      fsjson.String `json:"dump,omitempty"`
	Stack     fsjson.String `json:"stack,omitempty"`
	Construct fsjson.String `json:"construct,omitempty"`
	NoDump    bool          `json:"no_dump,omitempty"` // the folder held no dump.json when it was found

	Task    string       `json:"task,omitempty"`
	Level   string       `json:"level,omitempty"`
	Entries int          `json:"entries"`
	Bytes   int64        `json:"bytes"`
	OpenErr string       `json:"open_error,omitempty"`
	Damage  *damageAt    `json:"damage,omitempty"`
	Counts  recordCounts `json:"counts"`
	Notes   recordNotes  `json:"notes"`

	FirstBwd int `json:"first_backward"`
	LastBwd  int `json:"last_backward"`
	LastColl int `json:"last_collective"`

	Events     []recordEvent       `json:"events,omitempty"`
	Colls      []recordColl        `json:"collectives,omitempty"`
	Suppressed []recordSuppressed  `json:"suppressed,omitempty"`
	Local      *recordLocal        `json:"local,omitempty"`
	Order      map[string][2]int32 `json:"order,omitempty"` // base: before, after
	Seen       map[string]int32    `json:"seen"`            // nil and empty differ: empty is a damaged file read before any collective
	Groups     map[string][]int    `json:"groups,omitempty"`
	StackErr   string              `json:"stack_error,omitempty"`
	ConstrErr  string              `json:"construct_error,omitempty"`
	Details    *details            `json:"details,omitempty"`
}

// recordCounts are a rank scan's counters.
type recordCounts struct {
	Tensors     int  `json:"tensors"`
	Stats       int  `json:"stats"`
	SearchStats int  `json:"search_stats,omitempty"`
	Statless    int  `json:"statless,omitempty"`
	Flagged     int  `json:"flagged,omitempty"`
	NanCheck    bool `json:"nan_check,omitempty"`
	Cleared     bool `json:"cleared,omitempty"`
	Stopped     bool `json:"stopped,omitempty"`
	CollsFull   bool `json:"collectives_full,omitempty"`
}

// recordNotes are what a rank scan noticed about its file, for warnings.
type recordNotes struct {
	OddStatKeys   bool     `json:"odd_stat_keys,omitempty"`
	Underscored   string   `json:"underscored,omitempty"`
	KeyedEntry    string   `json:"keyed_entry,omitempty"`
	MergedEntry   string   `json:"merged_entry,omitempty"`
	Merged        int      `json:"merged,omitempty"`
	CutEntry      string   `json:"cut_entry,omitempty"`
	OddStats      int      `json:"odd_stats,omitempty"`
	OddStatsEntry string   `json:"odd_stats_entry,omitempty"`
	DupEntry      string   `json:"dup_entry,omitempty"`
	DupKey        string   `json:"dup_key,omitempty"`
	Changed       string   `json:"changed,omitempty"`
	Limits        []string `json:"limits,omitempty"`
	Inexact       bool     `json:"inexact,omitempty"` // a limit made the account a guess
}

// recordEvent is an event (a call the verdict may name).
type recordEvent struct {
	Index         int                `json:"index"`
	Name          string             `json:"name"`
	Offset        int64              `json:"offset"`
	End           int64              `json:"end"`
	Dir           notation.Direction `json:"direction"`
	Module        bool               `json:"module,omitempty"`
	Coll          int                `json:"collective"`
	In            nonfinite.Class    `json:"in,omitempty"`
	Out           nonfinite.Class    `json:"out,omitempty"`
	Birth         nonfinite.Class    `json:"birth,omitempty"`
	Param         nonfinite.Class    `json:"param,omitempty"`
	GradIn        nonfinite.Class    `json:"grad_in,omitempty"`
	NegConst      bool               `json:"neg_const,omitempty"`
	Statless      bool               `json:"statless,omitempty"`
	Tensors       int                `json:"tensors,omitempty"`
	Stats         int                `json:"stats,omitempty"`
	Flagged       bool               `json:"flagged,omitempty"`
	Recompute     bool               `json:"recompute,omitempty"`
	PrevClean     int                `json:"prev_clean"`
	PrevCleanName string             `json:"prev_clean_name,omitempty"`
	LegitNeg      int                `json:"legit_neg"`
	Phase         policy.Phase       `json:"phase"`
}

// recordColl is a collective event.
type recordColl struct {
	Index    int             `json:"index"`
	Name     string          `json:"name"`
	API      string          `json:"api"`
	Key      string          `json:"key"`
	Base     string          `json:"base"`
	Group    []int           `json:"group,omitempty"`
	GroupKey string          `json:"group_key,omitempty"`
	Named    bool            `json:"named,omitempty"`
	Send     nonfinite.Class `json:"send,omitempty"`
	Dest     nonfinite.Class `json:"dest,omitempty"`
	Ignored  nonfinite.Class `json:"ignored,omitempty"`
	Peer     int             `json:"peer"`
	P2P      int             `json:"p2p,omitempty"`
	Phase    policy.Phase    `json:"phase,omitempty"`
}

type recordSuppressed struct {
	Op     string          `json:"op"`
	Reason string          `json:"reason"`
	Values nonfinite.Class `json:"values"`
	First  string          `json:"first"`
	Count  int             `json:"count"`
	Birth  bool            `json:"birth,omitempty"`
}

// recordLocal is a rank's own account; events are positions in Events.
type recordLocal struct {
	First    int             `json:"first"`
	Root     int             `json:"root"`
	FirstNaN int             `json:"first_nan"`
	Births   []int           `json:"births,omitempty"`
	Role     role            `json:"role"`
	Kind     nonfinite.Class `json:"kind,omitempty"`
	Promoted bool            `json:"promoted,omitempty"`
}

// damageAt is where and how a dump.json is damaged.
type damageAt struct {
	Offset int64  `json:"offset"`
	Text   string `json:"text"` // the reader's message, offset included
}

func (d *damageAt) Error() string { return d.Text }

// toRecord turns a finished rank scan into a record; rel makes its paths
// relative to the dump root.
func (s *rankScan) toRecord(rel func(string) string) record {
	path := func(p string) fsjson.String { return fsjson.String(rel(p)) }
	r := record{Mode: s.dir.Mode, Step: s.dir.Step, Rank: s.dir.Rank, Dir: path(s.dir.Dir), Dump: path(s.dir.Dump),
		Stack: path(s.dir.Stack), Construct: path(s.dir.Construct), NoDump: s.dir.NoDump, Task: s.header.Task, Level: s.header.Level,
		Entries: s.entries, Bytes: s.bytes, Damage: s.damage,
		FirstBwd: s.firstBwd, LastBwd: s.lastBwd, LastColl: s.lastColl,
		Seen: s.seen, Groups: s.groups, Details: s.det,
		Counts: recordCounts{Tensors: s.tensors, Stats: s.stats, SearchStats: s.searchStats, Statless: s.statless,
			Flagged: s.flagged, NanCheck: s.nanCheck, Cleared: s.cleared, Stopped: s.stopped, CollsFull: s.collsFull},
		Notes: recordNotes{OddStatKeys: s.oddStatKeys, Underscored: s.underscored, KeyedEntry: s.keyedEntry,
			MergedEntry: s.mergedEntry, Merged: s.merged, CutEntry: s.cutEntry, OddStats: s.oddStats,
			OddStatsEntry: s.oddStatsEntry, DupEntry: s.dupEntry, DupKey: s.dupKey, Changed: s.changed, Limits: s.limits, Inexact: s.inexact},
	}
	if s.openErr != nil {
		r.OpenErr = s.openErr.Error()
	}
	if s.sides.stack != nil {
		r.StackErr = s.sides.stack.Error()
	}
	if s.sides.construct != nil {
		r.ConstrErr = s.sides.construct.Error()
	}
	pos := map[*event]int{}
	for i := range s.events {
		ev := &s.events[i]
		pos[ev] = i
		r.Events = append(r.Events, recordEvent{Index: ev.index, Name: ev.name, Offset: ev.offset, End: ev.end,
			Dir: ev.dir, Module: ev.module, Coll: ev.collIdx, In: ev.in, Out: ev.out, Birth: ev.birth, Param: ev.param,
			GradIn: ev.gradIn, NegConst: ev.negConst, Statless: ev.statless, Tensors: ev.tensors, Stats: ev.stats,
			Flagged: ev.flagged, Recompute: ev.recompute, PrevClean: ev.prevClean, PrevCleanName: ev.prevCleanName,
			LegitNeg: ev.legitNeg, Phase: ev.phase})
	}
	for _, c := range s.colls {
		r.Colls = append(r.Colls, recordColl{Index: c.index, Name: c.name, API: c.api, Key: c.key, Base: c.base,
			Group: c.group, GroupKey: c.groupKey, Named: c.named, Send: c.send, Dest: c.dest, Ignored: c.ignored,
			Peer: c.peer, P2P: c.p2p, Phase: c.phase})
	}
	for _, x := range s.suppressed {
		r.Suppressed = append(r.Suppressed, recordSuppressed{Op: x.op, Reason: x.reason, Values: x.values,
			First: x.first, Count: x.count, Birth: x.birth})
	}
	if s.order != nil {
		r.Order = make(map[string][2]int32, len(s.order))
		for base, o := range s.order {
			r.Order[base] = [2]int32{o.before, o.after}
		}
	}
	if l := s.local; l != nil {
		at := func(ev *event) int {
			if ev == nil {
				return -1
			}
			return pos[ev]
		}
		rl := &recordLocal{First: at(l.first), Root: at(l.root), FirstNaN: at(l.firstNaN), Role: l.role, Kind: l.kind, Promoted: l.promoted}
		for _, b := range l.births {
			rl.Births = append(rl.Births, at(b))
		}
		r.Local = rl
	}
	return r
}

// errRecord is an error kept in a record by its message.
type errRecord string

func (e errRecord) Error() string { return string(e) }

// fromRecord is the rank scan a record holds; abs turns its paths back
// into paths under the dump root it was made from.
func fromRecord(r *record, abs func(string) string) (*rankScan, error) {
	path := func(p fsjson.String) string { return abs(string(p)) }
	s := newRankScan(dump.RankDir{Mode: r.Mode, Step: r.Step, Rank: r.Rank, Dir: path(r.Dir), Dump: path(r.Dump),
		Stack: path(r.Stack), Construct: path(r.Construct), NoDump: r.NoDump})
	s.header.Task, s.header.Level = r.Task, r.Level
	s.entries, s.bytes, s.damage = r.Entries, r.Bytes, r.Damage
	if r.OpenErr != "" {
		s.openErr = errRecord(r.OpenErr)
	}
	if r.StackErr != "" {
		s.sides.stack = errRecord(r.StackErr)
	}
	if r.ConstrErr != "" {
		s.sides.construct = errRecord(r.ConstrErr)
	}
	s.firstBwd, s.lastBwd, s.lastColl = r.FirstBwd, r.LastBwd, r.LastColl
	c := r.Counts
	s.tensors, s.stats, s.searchStats, s.statless, s.flagged = c.Tensors, c.Stats, c.SearchStats, c.Statless, c.Flagged
	s.nanCheck, s.cleared, s.stopped, s.collsFull = c.NanCheck, c.Cleared, c.Stopped, c.CollsFull
	n := r.Notes
	s.oddStatKeys, s.underscored, s.keyedEntry, s.mergedEntry, s.merged = n.OddStatKeys, n.Underscored, n.KeyedEntry, n.MergedEntry, n.Merged
	s.cutEntry, s.oddStats, s.oddStatsEntry, s.dupEntry, s.dupKey, s.changed = n.CutEntry, n.OddStats, n.OddStatsEntry, n.DupEntry, n.DupKey, n.Changed
	s.limits, s.inexact = n.Limits, n.Inexact
	s.colls = make([]collEvent, 0, len(r.Colls))
	for _, x := range r.Colls {
		where := &collWhere{api: x.API, key: x.Key, base: x.Base, group: x.Group, groupKey: x.GroupKey}
		s.colls = append(s.colls, collEvent{collWhere: where, index: x.Index, name: x.Name, named: x.Named,
			send: x.Send, dest: x.Dest, ignored: x.Ignored, peer: x.Peer, p2p: x.P2P, phase: x.Phase})
	}
	for _, e := range r.Events {
		if e.Coll < -1 || e.Coll >= len(s.colls) {
			return nil, errors.New("an event names a collective the record does not hold")
		}
		ev := event{index: e.Index, name: e.Name, offset: e.Offset, end: e.End, dir: e.Dir, module: e.Module,
			collIdx: e.Coll, flagged: e.Flagged, recompute: e.Recompute, prevClean: e.PrevClean,
			prevCleanName: e.PrevCleanName, legitNeg: e.LegitNeg, phase: e.Phase}
		ev.facts = facts{in: e.In, out: e.Out, birth: e.Birth, param: e.Param, gradIn: e.GradIn, negConst: e.NegConst,
			statless: e.Statless, tensors: e.Tensors, stats: e.Stats}
		s.events = append(s.events, ev)
	}
	for _, x := range r.Suppressed {
		s.suppressed = append(s.suppressed, suppression{suppressKey: suppressKey{op: x.Op, reason: x.Reason, values: x.Values},
			first: x.First, count: x.Count, birth: x.Birth})
	}
	if r.Order != nil {
		s.order = make(map[string]syncSummary, len(r.Order))
		for base, o := range r.Order {
			s.order[base] = syncSummary{before: o[0], after: o[1]}
		}
	}
	s.seen = r.Seen
	s.groups = maps.Clone(r.Groups)
	if s.groups == nil {
		s.groups = map[string][]int{}
	}
	s.syncs, s.preOps, s.supIndex = nil, nil, nil
	s.det = r.Details
	if rl := r.Local; rl != nil {
		at := func(i int) (*event, error) {
			switch {
			case i == -1:
				return nil, nil
			case i < 0 || i >= len(s.events):
				return nil, errors.New("the rank's account names an event the record does not hold")
			}
			return &s.events[i], nil
		}
		l := &local{role: rl.Role, kind: rl.Kind, promoted: rl.Promoted}
		var err error
		for _, p := range []struct {
			dst **event
			i   int
		}{{&l.first, rl.First}, {&l.root, rl.Root}, {&l.firstNaN, rl.FirstNaN}} {
			if *p.dst, err = at(p.i); err != nil {
				return nil, err
			}
		}
		for _, i := range rl.Births {
			b, err := at(i)
			if err != nil || b == nil {
				return nil, errors.New("the rank's account names a birth the record does not hold")
			}
			l.births = append(l.births, b)
		}
		if l.first != nil && l.root == nil {
			return nil, errors.New("the rank's account has a first sign and no root")
		}
		s.local = l
	}
	return s, nil
}
