package dump

// maxKept is how many tensors, and how many non-tensor values, an entry
// keeps one by one. msprobe's largest entries (a _foreach_ call over every
// parameter) hold a few thousand; past the bound the reader keeps memory
// flat whatever the file holds: further tensors are merged into one
// summary tensor per field and set of non-finite statistics (so no
// non-finite value is lost, only its position), further non-tensor values
// are kept only when not finite (merged the same way), and further
// keyword names are not kept. Entry.Merged counts what was merged or
// dropped.
const maxKept = 1 << 14

// mergeKey groups the values merged past maxKept.
type mergeKey struct {
	field                Field
	tensor               bool
	max, min, mean, norm Class
}

func (r *Reader) addTensor(t Tensor) {
	e := &r.e
	if len(e.Tensors) < maxKept {
		e.Tensors = append(e.Tensors, t)
		return
	}
	e.Merged++
	k := mergeKey{field: t.Field, tensor: true, max: t.Max.Class, min: t.Min.Class, mean: t.Mean.Class, norm: t.Norm.Class}
	i, ok := r.mergedAt(k, len(e.Tensors))
	if !ok {
		t.Slot = "" // the summary stands for many slots
		e.Tensors = append(e.Tensors, t)
		return
	}
	m := &e.Tensors[i]
	m.Max = widen(m.Max, t.Max, true)
	m.Min = widen(m.Min, t.Min, false)
	m.RequiresGrad = m.RequiresGrad || t.RequiresGrad
	m.Checksum = m.Checksum || t.Checksum
	m.Empty = m.Empty && t.Empty
}

func (r *Reader) addArg(a Arg) {
	e := &r.e
	if len(e.Args) < maxKept {
		e.Args = append(e.Args, a)
		return
	}
	e.Merged++
	if a.Num.Class == 0 {
		return
	}
	k := mergeKey{field: a.Field, max: a.Num.Class}
	if _, ok := r.mergedAt(k, len(e.Args)); !ok {
		a.Slot = ""
		e.Args = append(e.Args, a)
	}
}

func (r *Reader) addKwarg(name string) {
	e := &r.e
	if len(e.Kwargs) < maxKept {
		e.Kwargs = append(e.Kwargs, name)
		return
	}
	e.Merged++
}

// mergedAt returns the index of the summary for k, or records next as its
// index and returns false.
func (r *Reader) mergedAt(k mergeKey, next int) (int, bool) {
	if r.merged == nil {
		r.merged = map[mergeKey]int{}
	}
	if i, ok := r.merged[k]; ok {
		return i, true
	}
	r.merged[k] = next
	return next, false
}

// widen keeps the larger (upper) or smaller statistic of two numbers with
// the same non-finite class.
func widen(a, b Stat, upper bool) Stat {
	if a.Kind != StatNumber {
		return b
	}
	if b.Kind != StatNumber {
		return a
	}
	if (upper && b.Value > a.Value) || (!upper && b.Value < a.Value) {
		return b
	}
	return a
}
