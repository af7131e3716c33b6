package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
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

// torchSaveOverhead is what torch.save adds to a tensor's data in its own
// .pt file (the zip archive and the pickled storage): about 0.9 kB,
// measured on msprobe's tensor dumps.
const torchSaveOverhead = 900

// Measure reads one rank's dump.json of one step and sizes the tensors the
// calls of the listed APIs ("Torch.sqrt", "Tensor.__mul__") would save with
// data_mode "all": every input and output tensor, data plus file overhead,
// and the entries themselves.
func Measure(file string, apis []string) (Sizes, error) {
	s := Sizes{File: file}
	f, err := safeio.Open(file)
	if err != nil {
		return s, err
	}
	defer f.Close()
	r := dump.NewReader(f, dump.ReaderOptions{Details: true, Select: func(name string, _ int64) bool {
		return slices.Contains(apis, dump.ParseName(name).Op())
	}})
	for r.Next() {
		e := r.Entry()
		if e.Skipped {
			continue
		}
		s.Calls++
		s.Bytes += 2 * (e.End - e.Offset) // the entry again, with data_name fields
		for i := range e.Tensors {
			t := &e.Tensors[i]
			if t.Shape == nil && t.Dtype == "" {
				continue
			}
			s.Tensors++
			s.Bytes += elements(t.Shape)*elementSize(t.Dtype) + torchSaveOverhead
		}
	}
	if err := r.Err(); err != nil {
		return s, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

func elements(shape []int) int64 {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0
		}
		n *= int64(d)
	}
	return n
}

// elementSize is the bytes of one element of a dtype as msprobe writes it
// ("torch.float16"); an unknown dtype counts as four.
func elementSize(dtype string) int64 {
	d := strings.TrimPrefix(strings.TrimPrefix(dtype, "torch."), "mindspore.")
	switch {
	case d == "bool" || strings.HasSuffix(d, "int8") || strings.Contains(d, "float8"):
		return 1
	case d == "float16" || d == "bfloat16" || d == "half" || strings.HasSuffix(d, "int16"):
		return 2
	case d == "float64" || d == "double" || strings.HasSuffix(d, "int64") || d == "long" || d == "complex64":
		return 8
	case d == "complex128":
		return 16
	}
	return 4
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
