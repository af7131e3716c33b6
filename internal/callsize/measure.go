package callsize

import (
	"io"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
)

// Sizes is what one op's calls in a dump.json would save as a tensor
// dump (data_mode "all"): the calls, their tensors, and the bytes of the
// tensor files and of the entries.
type Sizes struct {
	Calls   int   `json:"calls"`
	Tensors int   `json:"tensors"`
	Bytes   int64 `json:"bytes"`
}

// torchSaveOverhead is what torch.save adds to a tensor's data in its own
// .pt file (the zip archive and the pickled storage): about 0.9 kB,
// measured on msprobe's tensor dumps.
const torchSaveOverhead = 900

// Measure reads a dump.json from r and sizes, op by op ("Torch.sqrt",
// "Tensor.__mul__": names without counter and direction), the tensors the
// calls of the listed ops would save: every input and output tensor, data
// plus file overhead, and the entries themselves (twice: with data_name).
func Measure(rd io.Reader, ops []string) (map[string]Sizes, error) {
	out := map[string]Sizes{}
	r := dump.NewReader(rd, dump.ReaderOptions{Details: true, Select: func(name string, _ int64) bool {
		return slices.Contains(ops, dump.ParseName(name).Op())
	}})
	for r.Next() {
		e := r.Entry()
		if e.Skipped {
			continue
		}
		op := dump.ParseName(e.Name).Op()
		out[op] = addCall(out[op], e)
	}
	return out, r.Err()
}

// addCall adds a call's entry and tensors to its op's sizes.
func addCall(s Sizes, e *dump.Entry) Sizes {
	s.Calls++
	s.Bytes += 2 * (e.End - e.Offset)
	for i := range e.Tensors {
		t := &e.Tensors[i]
		if t.Shape == nil && t.Dtype == "" {
			continue
		}
		s.Tensors++
		s.Bytes += elements(t.Shape)*elementSize(t.Dtype) + torchSaveOverhead
	}
	return s
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
