package truth

// What the dump shows. While a dumped step runs, every rank keeps a short
// record of the entries it wrote that matter to an analysis: the ones that
// held illegitimate non-finite values (up to the first one with a NaN
// output), the ones that make -inf on purpose (masks), and every
// collective side with the physical instance it took part in. At the end of
// the step the records of all ranks, cut where the damage of the spec cuts
// the files, make the step's view (view.go), from which the truth is read.

// Holds is a set of illegitimate non-finite values.
type Holds uint8

// The non-finite values a set holds.
const (
	HoldsNaN Holds = 1 << iota
	HoldsPInf
	HoldsNInf
)

func (h Holds) has(x Holds) bool { return h&x != 0 }

// kind names what a set of values holds: nan when it holds NaN, else inf.
func (h Holds) kind() string {
	if h.has(HoldsNaN) {
		return "nan"
	}
	return "inf"
}

// EntryKind is the kind of a dump entry.
type EntryKind uint8

// The kinds of dump entries: an API call's forward, a backward, a module
// call's forward, a module's parameters_grad.
const (
	EntryAPI EntryKind = iota
	EntryBackward
	EntryModule
	EntryParamsGrad
)

// Op is an entry's op: its name without counter and direction.
type Op struct{ Prefix, API string }

// Clock is a pairing key of collective calls without its counter: a group
// and an api, a sender and a receiver, or an entry name.
type Clock struct {
	p2p      bool
	group    string
	api      string
	from, to int
	name     string
}

// GroupClock is the key of the calls of api in the group whose key is
// group.
func GroupClock(group, api string) Clock { return Clock{group: group, api: api} }

// P2PClock is the key of the messages from one rank to another.
func P2PClock(from, to int) Clock { return Clock{p2p: true, from: from, to: to} }

// instID is one physical collective instance: the k-th call of a clock.
type instID struct {
	clock Clock
	k     int
}

// collSide is one rank's side of a collective instance.
type collSide struct {
	inst       instID
	send, recv Holds
	members    []int // participants, ascending
}

// seenEntry is one recorded dump entry.
type seenEntry struct {
	pos  int   // index in dump.json
	end  int64 // byte offset after the entry
	name string
	kind EntryKind
	// ph is the phase the analysis sees, phys the one the simulation ran
	// the call in (they differ where the dump cannot tell, see view.go).
	ph, phys Phase
	// in, out: illegitimate non-finite values in the inputs and outputs;
	// inParams: those under a module entry's parameters.
	in, out, inParams Holds
	// inNeg, outNeg: -inf anywhere, legitimate or not.
	inNeg, outNeg bool
	// legitNeg: the entry makes -inf on purpose (a mask) or has a -inf
	// non-tensor argument.
	legitNeg bool
	op       Op
	// bwdFrame: the stack has a frame of a function named backward
	bwdFrame bool
	// weights: every illegitimate input is a parameter as the update of an
	// earlier step wrote it (nothing else writes parameters); inGrad:
	// every illegitimate input requires grad.
	weights, inGrad bool
	// nextBwd is the end offset of the next backward entry in the file,
	// -1 when none follows; afterBwd: a backward entry comes before it.
	nextBwd  int64
	afterBwd bool
	coll     *collSide
}

// Log is one rank's record of one dumped step.
type Log struct {
	entries []seenEntry
	// pending are the entries still waiting for a backward entry after
	// them.
	pending []int
	// nanSeen: an entry with a NaN output was recorded; later entries are
	// recorded only when they are collectives.
	nanSeen bool
	counts  map[Clock]int
	// total is the number of entries written, firstEnd the end offset of
	// the first one; bwdSeen: a backward entry was written, firstBwdEnd
	// the end offset of the first one (-1: none); firstOpt is the position
	// of the first entry the simulation ran in the optimizer or in the
	// gradient clipping (-1: none).
	total       int
	firstEnd    int64
	bwdSeen     bool
	firstBwdEnd int64
	firstOpt    int
	// before are the ops of the entries before the first backward entry.
	before      map[Op]bool
	firstBwd    int   // position of the first backward entry (-1: none)
	lastBwd     int   // position of the last backward entry (-1: none)
	firstOptEnd int64 // end offset of the entry at firstOpt
}

// NewLog returns an empty record.
func NewLog() *Log {
	return &Log{counts: map[Clock]int{}, firstBwdEnd: -1, firstOpt: -1, firstBwd: -1, lastBwd: -1, before: map[Op]bool{}}
}

// add appends an entry when it matters: collectives always, the others
// when they hold non-finite values or make masks, up to the first NaN.
func (l *Log) add(e seenEntry) {
	e.nextBwd, e.afterBwd = -1, l.bwdSeen
	if l.total == 0 {
		l.firstEnd = e.end
	}
	l.total++
	if e.kind == EntryBackward || e.kind == EntryParamsGrad {
		for _, i := range l.pending {
			l.entries[i].nextBwd = e.end
		}
		l.pending = l.pending[:0]
		if !l.bwdSeen {
			l.firstBwd, l.firstBwdEnd = e.pos, e.end
		}
		l.bwdSeen = true
		l.lastBwd = e.pos
	} else if !l.bwdSeen {
		l.before[e.op] = true
	}
	if l.firstOpt < 0 && (e.ph == PhaseOptimizer || e.ph == PhaseClip) {
		l.firstOpt, l.firstOptEnd = e.pos, e.end
	}
	keep := e.coll != nil || (!l.nanSeen && (e.in != 0 || e.out != 0 || e.inParams != 0 || e.legitNeg))
	if !keep {
		return
	}
	if e.coll == nil && e.out.has(HoldsNaN) {
		l.nanSeen = true
	}
	if e.coll != nil && e.coll.recv.has(HoldsNaN) {
		// a collective that received NaN is a first NaN too
		l.nanSeen = true
	}
	l.entries = append(l.entries, e)
	l.pending = append(l.pending, len(l.entries)-1)
}

// Coll is the collective side of an entry as the dump can pair it: the
// clock of its calls (by its entry name instead when ByName), what the
// rank sent and received, and the participants, ascending.
type Coll struct {
	Clock      Clock
	Send, Recv Holds
	Members    []int
	ByName     bool
}

// Entry is an entry just written to dump.json, as the simulation saw it.
type Entry struct {
	Pos  int   // index in dump.json
	End  int64 // byte offset after the entry
	Name string
	Kind EntryKind
	// Phase is the phase the simulation ran the call in.
	Phase Phase
	Op    Op
	// In, Out: illegitimate non-finite values in the inputs and outputs
	// (of a collective: what it sent and received); InParams: those
	// under a module entry's parameters.
	In, Out, InParams Holds
	// InNeg, OutNeg: -inf anywhere, legitimate or not.
	InNeg, OutNeg bool
	// LegitNeg: the entry makes -inf on purpose (a mask) or has a -inf
	// non-tensor argument.
	LegitNeg bool
	// BwdFrame: the stack has a frame of a function named backward.
	BwdFrame bool
	// Weights: every illegitimate input is a parameter as the update of an
	// earlier step wrote it; InGrad: every illegitimate input requires
	// grad.
	Weights, InGrad bool
	Coll            *Coll
}

// Add records an entry: collectives always, the others when they hold
// non-finite values or make masks, up to the first NaN.
func (l *Log) Add(n Entry) {
	e := seenEntry{pos: n.Pos, end: n.End, name: n.Name, kind: n.Kind, ph: n.Phase, phys: n.Phase, op: n.Op,
		in: n.In, out: n.Out, inParams: n.InParams, inNeg: n.InNeg, outNeg: n.OutNeg, legitNeg: n.LegitNeg,
		bwdFrame: n.BwdFrame, weights: n.Weights, inGrad: n.InGrad}
	if c := n.Coll; c != nil {
		clock := c.Clock
		if c.ByName {
			clock = Clock{name: n.Name}
		}
		k := l.counts[clock]
		l.counts[clock] = k + 1
		e.coll = &collSide{inst: instID{clock, k}, send: c.Send, recv: c.Recv, members: c.Members}
	}
	l.add(e)
}

// firstTaintEnd is the end offset of the first recorded entry that held
// illegitimate non-finite values, 0 when none did.
func (l *Log) firstTaintEnd() int64 {
	if l == nil {
		return 0
	}
	for _, e := range l.entries {
		if e.in != 0 || e.out != 0 {
			return e.end
		}
	}
	return 0
}
