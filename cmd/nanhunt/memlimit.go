package main

import (
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

// limitMemory sets the soft memory limit unless GOMEMLIMIT is set. A join
// of summaries runs under it too: its live heap, the list of rank folders
// and one step's records, stays below it (1,024 ranks x 100 steps: 26-27 MB
// at its largest, 54 MB peak RSS with the limit, 57-67 MB without).
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(softMemoryLimit)
}
