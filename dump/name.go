package dump

import (
	"bytes"

	"github.com/nanhunt/nanhunt/internal/notation"
)

// Direction is the pass an entry belongs to, as its name says.
type Direction = notation.Direction

// The passes an entry name may say (see notation.Direction).
const (
	DirUnknown = notation.DirUnknown
	Forward    = notation.Forward
	Backward   = notation.Backward
	ParamGrad  = notation.ParamGrad
)

// Name is an entry name taken apart (see notation.Name).
type Name = notation.Name

// ParseName splits an entry name. It never fails: names it cannot read get
// DirUnknown and the whole name as API.
func ParseName(full string) Name { return notation.ParseName(full) }

// atoi reads a counter, a folder number or a line number: digits only; a
// number past a billion reads as 999,999,999.
func atoi(s string) (int, bool) { return notation.Counter(s) }

// MayBeBackward is a quick look at an entry name's bytes that is true for
// every name ParseName reads as backward (IsBackward), and false for most
// others: a backward name says "backward" or "parameters_grad", or ends in
// "_1" (the {api}_{N}_{M} form). It lets a search over every entry line
// leave the others unparsed.
func MayBeBackward(name []byte) bool {
	return bytes.Contains(name, []byte("backward")) || bytes.Contains(name, []byte("parameters_grad")) ||
		bytes.HasSuffix(name, []byte("_1"))
}
