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
// limit (for 1,024 ranks: 60 MB peak RSS and 2.8-3.2 s without it, 52 MB
// and 3.6-5.5 s with it).
func liftMemoryLimit() {
	if memoryLimited {
		debug.SetMemoryLimit(math.MaxInt64)
		memoryLimited = false
	}
}
