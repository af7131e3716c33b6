package trace

import (
	"context"
	"sync/atomic"

	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/tinylimits"
)

// scanLimits bound what one rank scan keeps, so that memory does not grow
// with a file. None of them changes what a verdict decides (its origin,
// first NaN, carrier, spread, the ranks' roles, the confidence): each one
// either cannot (a listing, a cache, a guess about what to parse) or,
// when it is reached, makes the scan read the file again whole or read
// again the part it did not keep. The tests run with every one of them
// held to a few (tinyLimits, internal/tinylimits) and compare the
// verdicts with the reference analyser's.
type scanLimits struct {
	// deferred: the masked forward calls after the latest backward entry
	// that the walk passed over, kept to be parsed if no backward entry
	// follows (-inf is severe after the last one). Past it, the file is
	// parsed whole (parseAll).
	deferred int
	// spans: the spans of suspects the byte search keeps; past it the
	// nearest merge, so a span may hold clean bytes, never leave a suspect
	// out: more entries are parsed, no fewer.
	spans int
	// colls: the non-finite collectives kept whole, for the pairing across
	// ranks; past it, the first that received NaN is still kept (the rank's
	// first NaN), so are the first collsPerBase of each pairing base (where
	// a value first crosses a process group, other ranks first receive it)
	// up to twice colls in all, and the others are read again from the
	// file when another rank's first sign is one of their instances
	// (sendersAgain).
	colls, collsPerBase int
	// preOps: the distinct ops kept of the calls before the first backward
	// entry (a call between the backward entries whose op ran before them
	// is a later micro-batch's forward); past it, the ops of the calls the
	// verdict names are looked up by reading those names again.
	preOps int
	// tail: the names kept of the entries after the latest backward entry
	// (where the optimizer starts is decided among them); past it, they
	// are read again when the phases need them.
	tail int
	// tailByName: the longest tail whose names the side files are asked
	// for; a longer one asks them for the calls they place in the
	// optimizer, which gives the same phases (TestTailByNameOrByOptimizer).
	tailByName int
	// births: the births a rank's account lists (candidates, and -inf
	// that never grew into an anomaly); the origin, root and first NaN are
	// kept whatever it is (signs).
	births int
	// suppressKeys: the kinds of exclusions (op, reason, values) listed per
	// rank; past it, the other ops' counts are listed together under "*".
	suppressKeys int
	// groups: the process groups kept one by one per rank; past it, their
	// ranks are kept together (only which ranks belong to the job counts).
	groups int
	// interned: the op names a worker keeps one copy of; past it, names
	// are not shared (memory only).
	interned int
	// backwardProbe: how far past the last mask of a file whose suspects
	// are all masks a backward entry is looked for, before the file is read
	// from its end for its last one (policy.PlanFile): the same plan either
	// way. Tiny limits look nowhere (0), so that the differential runs the
	// read from the end, which the normal limits seldom reach.
	backwardProbe int64
}

// normalLimits are the limits of every run.
var normalLimits = scanLimits{deferred: 4096, spans: 1 << 14, colls: 64, collsPerBase: 1, preOps: 1 << 13, tail: 1 << 16,
	tailByName: 1024, births: 16, suppressKeys: 64, groups: 1024, interned: 1 << 16, backwardProbe: policy.BackwardProbe}

// tinyLimits are the limits of the tests' tiny-limits mode: each small
// enough that the scans of small dumps reach it.
var tinyLimits = scanLimits{deferred: 2, spans: 2, colls: 1, collsPerBase: 0, preOps: 2, tail: 3,
	tailByName: 2, births: 2, suppressKeys: 2, groups: 1, interned: 1, backwardProbe: 0}

// limitsOf returns the limits a scan under ctx runs with.
func limitsOf(ctx context.Context) *scanLimits {
	if tinylimits.On(ctx) {
		return &tinyLimits
	}
	return &normalLimits
}

// reached counts the scans that reached each limit, and so ran what it
// leads to: for the tests, which hold that tiny limits are reached.
var reached struct {
	deferred, spans, colls, collsAgain, preOps, tail, births, suppressKeys, groups, interned atomic.Int64
}

// maxBases bounds the pairing bases (process group and api, or the two
// peers) a rank scan follows. It is no limit of the fast path but of any
// reading in bounded memory: a hostile file can hold a new group in every
// call. Past it, the bases met are not followed: they order nothing, which
// can leave two ranks unordered (a tie) where the collectives past the
// bound would have ordered them; the scan notes it (rankScan.limits), and
// the verdict warns.
const maxBases = 4096
