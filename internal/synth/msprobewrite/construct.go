package msprobewrite

import "github.com/nanhunt/nanhunt/internal/synth/spec"

// ConstructEntry is a construct.json member: an entry and the module
// call (or "optimizer", "clip_grad") it ran in; an empty Parent is null.
type ConstructEntry struct{ Name, Parent string }

// WriteConstruct writes construct.json ({} for L1, mix false).
func WriteConstruct(path string, f *spec.Format, o *OutSizes, mix bool, ents []ConstructEntry) error {
	j, err := newJSONOut(path, f, o)
	if err != nil {
		return err
	}
	j.raw("{")
	if mix {
		for i, e := range ents {
			if i > 0 {
				j.raw(",")
			}
			j.nl(1)
			j.key(e.Name)
			if e.Parent == "" {
				j.raw("null")
			} else {
				j.str(e.Parent)
			}
		}
		if len(ents) > 0 {
			j.nl(0)
		}
	}
	j.raw("}")
	return j.close()
}
