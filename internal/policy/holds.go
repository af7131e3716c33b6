package policy

import (
	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
)

// IgnoredStats are the statistics that never decide whether a tensor holds a
// non-finite value: msprobe computes Mean and Norm in the tensor's own
// dtype, so a finite float16 tensor often has an infinite norm, while a NaN
// anywhere makes Max and Min NaN and an infinity shows in one of them.
var IgnoredStats = []string{"Mean", "Norm"}

// Holds is what a tensor holds besides finite numbers, from its Max and Min.
func Holds(t *dump.Tensor) nonfinite.Class { return t.Max.Class | t.Min.Class }

// Decided reports whether the tensor has a Max or Min to decide from.
func Decided(t *dump.Tensor) bool { return t.HasStats() }
