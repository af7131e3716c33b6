package plan

import (
	"fmt"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/callsize"
	"github.com/nanhunt/nanhunt/internal/safeio"
)

// Sizes is what a statistics dump tells of a tensor dump of some APIs on
// one rank at one step: the calls, the tensors they would save, and bytes.
type Sizes struct {
	Calls, Tensors int
	// Bytes is what the tensor files and the dump.json entries take.
	Bytes int64
	File  string // the dump.json measured
}

// Measure reads one rank's dump.json of one step and sizes the tensors the
// calls of the listed APIs ("Torch.sqrt", "Tensor.__mul__") would save with
// data_mode "all" (callsize.MeasureFile, summed).
func Measure(file string, apis []string) (Sizes, error) {
	f, err := safeio.Open(file)
	if err != nil {
		return Sizes{File: file}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Sizes{File: file}, err
	}
	by, err := callsize.MeasureFile(f, info.Size(), apis)
	if err != nil {
		err = fmt.Errorf("%s: %w", file, err)
	}
	return Sum(file, by), err
}

// Sum adds the sizes of several ops' calls.
func Sum(file string, by map[string]callsize.Sizes) Sizes {
	s := Sizes{File: file}
	for _, c := range by {
		s.Calls += c.Calls
		s.Tensors += c.Tensors
		s.Bytes += c.Bytes
	}
	return s
}

// FromDump measures in the dump at path (a dump_path, step or rank folder):
// the rank's dump.json of the step.
func FromDump(path string) func(step, rank int, apis []string) (Sizes, error) {
	return func(step, rank int, apis []string) (Sizes, error) {
		layout, err := dump.Discover(path)
		if err != nil {
			return Sizes{}, err
		}
		for _, d := range layout.Select(map[int]bool{step: true}, map[int]bool{rank: true}) {
			return Measure(d.Dump, apis)
		}
		return Sizes{}, fmt.Errorf("%s: no dump of rank %d at step %d", path, rank, step)
	}
}
