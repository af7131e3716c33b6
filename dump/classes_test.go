package dump

import "github.com/nanhunt/nanhunt/internal/nonfinite"

// The non-finite classes, by their short names, for the tests.
const (
	NaN    = nonfinite.NaN
	PosInf = nonfinite.PosInf
	NegInf = nonfinite.NegInf
)

// holds is what Max and Min say of a tensor, as the rule set reads them.
func holds(t *Tensor) Class { return t.Max.Class | t.Min.Class }
