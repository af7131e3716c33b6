package dump

import "github.com/nanhunt/nanhunt/internal/notation"

// Name is an entry name taken apart: Prefix ("Torch", "Distributed",
// "Module", or a custom dotted prefix), API (the api, or "path.Class" for
// a module), the counter Call (-1 when absent) and the pass Dir, whose String is
// "forward", "backward", "parameters_grad" or "unknown". msprobe
// writes
//
//	{Prefix}.{api}.{N}.{forward|backward}              API calls
//	{Module|Cell}.{path}.{Class}.{forward|backward}.{N} module calls
//	{Module|Cell}.{path}.{Class}.parameters_grad.{N}    module parameter gradients
//
// and the nan-overflow-detection skill documents {Prefix}.{api}_{N}_{M}
// (UnderscoreCounters). Op, IsBackward, ForwardName, IsDistributed and
// CollectiveAPI read it.
type Name = notation.Name

// ParseName splits an entry name. It never fails: names it cannot read get
// the pass "unknown" and the whole name as API.
func ParseName(full string) Name { return notation.ParseName(full) }
