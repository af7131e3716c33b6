package dump

import (
	"io"

	"github.com/nanhunt/nanhunt/internal/sidefile"
)

// Frame is one line of a Python stack as msprobe records it ("File
// {path}, line {n}, in {func}, \n {source}"): File, Line, Func and Source.
// IsLibrary tells PyTorch's, MindSpore's, msprobe's and Python's frames
// from the user's.
type Frame = sidefile.Frame

// StackFile is what a stack.json holds for the calls asked about: Frames,
// innermost first, by entry name; Triples, the members written as one
// [function, file, line] frame (the nan-overflow-detection skill's form);
// Truncated, set when a stack shared by too many names was cut.
type StackFile = sidefile.StackFile

// Construct is construct.json: each call's parent module call. Chain is a
// call's line of parents, outermost first; InUpdate says whether it ran in
// optimizer.step() or gradient clipping.
type Construct = sidefile.Construct

// ReadStackFile reads stack.json (format v1 {"name": [lines]}, v2
// {"0": [[names], [lines]]}, or the skill's [function, file, line]) and
// returns the frames of the wanted entry names. Backward entries have no
// stack of their own: ask for Name.ForwardName.
func ReadStackFile(r io.Reader, want map[string]bool) (StackFile, error) {
	return sidefile.ReadStackFile(r, want)
}

// ReadConstruct reads construct.json, streaming.
func ReadConstruct(r io.Reader) (Construct, error) { return sidefile.ReadConstruct(r) }
