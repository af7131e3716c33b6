package main

import (
	"math"
	"os"
	"runtime/debug"
)

// softMemoryLimit is the Go runtime's soft memory limit nanhunt runs
// under, unless GOMEMLIMIT says otherwise. What a trace keeps is small and
// does not grow with the dump, except the list of rank folders (about 300
// bytes each: 30 MB for 1,024 ranks of 100 steps); with the default
// GOGC the heap would grow to twice that before a collection. The limit
// makes the collector run earlier instead, at no measurable cost when the
// live heap is well below it.
const softMemoryLimit = 48 << 20

// memoryLimited is set when nanhunt set the limit itself.
var memoryLimited bool

// limitMemory sets the soft memory limit unless GOMEMLIMIT is set.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(softMemoryLimit)
	memoryLimited = true
}

// liftMemoryLimit removes the limit nanhunt set, for a join of summaries:
// it decodes a whole step's records at once, and its live heap brushes the
// limit (60 MB peak RSS for 1,024 ranks without it, 52 MB with it, but a
// fifth to a half slower).
func liftMemoryLimit() {
	if memoryLimited {
		debug.SetMemoryLimit(math.MaxInt64)
		memoryLimited = false
	}
}
