package export

import (
	"sync"

	"github.com/nanhunt/nanhunt/dump"
)

// batchRows is how many rows are handed to the file writer at once.
const batchRows = 1024

// batch collects rows before they are written. The optional values and the
// shapes point into arenas owned by the batch, so a batch allocates nothing
// once warm; the writer copies every value, so the batch is reused after
// each write.
type batch struct {
	rows   []Row
	floats []float64
	ints   []int64
	dims   []int64
}

// batches recycles batches between files.
var batches = sync.Pool{New: func() any { return newBatch() }}

func newBatch() *batch {
	return &batch{
		rows:   make([]Row, 0, batchRows),
		floats: make([]float64, 0, 4*batchRows),
		ints:   make([]int64, 0, batchRows),
		dims:   make([]int64, 0, 8*batchRows),
	}
}

func (b *batch) full() bool { return len(b.rows) >= batchRows }

func (b *batch) reset() {
	clear(b.rows) // drop the strings and pointers of the previous batch
	b.rows = b.rows[:0]
	b.floats = b.floats[:0]
	b.ints = b.ints[:0]
	b.dims = b.dims[:0]
}

// entryInfo is what all the rows of one entry share.
type entryInfo struct {
	step, rank int32
	index      int32
	name       string
	api        string
	direction  string
	module     bool
}

func entryOf(step, rank int, e *dump.Entry) entryInfo {
	n := dump.ParseName(e.Name)
	return entryInfo{
		step: int32(step), rank: int32(rank), index: int32(e.Index),
		name: e.Name, api: n.Op(), direction: n.Dir.String(), module: n.Module,
	}
}

// add appends the row of one tensor.
func (b *batch) add(ei *entryInfo, t *dump.Tensor) {
	r := Row{
		Step: ei.step, Rank: ei.rank, EntryIndex: ei.index, EntryName: ei.name,
		API: ei.api, Direction: ei.direction, Module: ei.module,
		Field: t.Field.String(), Slot: t.Slot, Dtype: t.Dtype,
		Max: b.stat(t.Max), Min: b.stat(t.Min), Mean: b.stat(t.Mean), Norm: b.stat(t.Norm),
		Nonfinite: nonfinite(t), RequiresGrad: t.RequiresGrad,
	}
	if shapeKnown(t) {
		start := len(b.dims)
		for _, d := range t.Shape {
			b.dims = append(b.dims, int64(d))
		}
		r.Shape = b.dims[start:len(b.dims):len(b.dims)]
		if n, ok := numel(t.Shape); ok {
			r.Numel = b.int(n)
		}
	}
	b.rows = append(b.rows, r)
}

// stat points to the statistic's value in the batch's arena, or is nil.
// The arena never grows past its capacity between resets (four statistics
// per row), so earlier pointers stay valid.
func (b *batch) stat(s dump.Stat) *float64 {
	v, ok := statValue(s)
	if !ok {
		return nil
	}
	if len(b.floats) == cap(b.floats) {
		return &v
	}
	b.floats = append(b.floats, v)
	return &b.floats[len(b.floats)-1]
}

func (b *batch) int(n int64) *int64 {
	if len(b.ints) == cap(b.ints) {
		return &n
	}
	b.ints = append(b.ints, n)
	return &b.ints[len(b.ints)-1]
}
