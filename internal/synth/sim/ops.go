package sim

import (
	"math"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// ---- non-finite bookkeeping ----

// mergeRows confines the non-finite values of o to the rows its inputs
// confine theirs to.
func mergeRows(o *tensor, ins ...*tensor) {
	if !o.nonFinite() {
		o.Rows = 0
		return
	}
	var rows uint64
	for _, t := range ins {
		if t == nil || !t.nonFinite() {
			continue
		}
		if t.Rows == 0 {
			o.Rows = 0
			return
		}
		rows |= t.Rows
	}
	o.Rows = rows
}

// flagsAdd sets the non-finite flags of a+b (a-b when sub).
func flagsAdd(o, a, b *tensor, sub bool) {
	ac, bc := *a, *b
	bp, bn := bc.PInf, bc.NInf
	if sub {
		bp, bn = bn, bp
	}
	o.NaN = ac.NaN || bc.NaN
	o.PInf = ac.PInf || bp
	o.NInf = ac.NInf || bn
	if (ac.PInf && bn) || (ac.NInf && bp) {
		o.NaN, o.born = true, true
	}
	o.NoFinite = ac.NoFinite && bc.NoFinite
	mergeRows(o, &ac, &bc)
}

// flagsMul sets the flags of an elementwise product.
func flagsMul(o, a, b *tensor) {
	ac, bc := *a, *b
	a, b = &ac, &bc
	o.NaN = a.NaN || b.NaN
	aInf, bInf := a.PInf || a.NInf, b.PInf || b.NInf
	if (aInf && (b.Zero || b.ZeroRow)) || (bInf && (a.Zero || a.ZeroRow)) {
		o.NaN, o.born = true, true
	}
	if aInf || bInf {
		o.PInf = (a.PInf && b.Max > 0) || (a.NInf && b.Min < 0) || (b.PInf && a.Max > 0) || (b.NInf && a.Min < 0)
		o.NInf = (a.NInf && b.Max > 0) || (a.PInf && b.Min < 0) || (b.NInf && a.Max > 0) || (b.PInf && a.Min < 0)
	}
	o.Zero = a.Zero || b.Zero
	o.ZeroRow = a.ZeroRow || b.ZeroRow
	mergeRows(o, a, b)
}

// flagsMat sets the flags of a matrix product (sums of products).
func flagsMat(o, a, b *tensor) {
	ac, bc := *a, *b
	a, b = &ac, &bc
	o.NaN = a.NaN || b.NaN
	aInf, bInf := a.PInf || a.NInf, b.PInf || b.NInf
	switch {
	case (aInf && b.Zero) || (bInf && a.Zero) || (aInf && bInf):
		o.NaN, o.born = true, true
	case aInf || bInf:
		o.PInf, o.NInf = true, true
	}
	mergeRows(o, a, b)
}

// flagsPass copies the flags of a (elementwise ops that keep values).
func flagsPass(o, a *tensor) {
	o.NaN, o.PInf, o.NInf, o.NoFinite = a.NaN, a.PInf, a.NInf, a.NoFinite
	o.Zero, o.ZeroRow, o.FullRow, o.Rows, o.Spike = a.Zero, a.ZeroRow, a.FullRow, a.Rows, a.Spike
}

// settle finishes an op's output: range overflow, legitimacy.
func settle(o *tensor, ins ...*tensor) *tensor {
	o.fin()
	if o.nonFinite() {
		legit := !o.born
		seen := false
		for _, t := range ins {
			if t != nil && t.nonFinite() {
				seen = true
				if !t.Legit {
					legit = false
				}
			}
		}
		o.Legit = legit && seen
		if o.born {
			o.Rows = 0
		}
	} else {
		o.Legit = false
	}
	o.born = false
	return o
}

func anyRG(ts []*tensor) bool {
	for _, t := range ts {
		if t != nil && t.RG {
			return true
		}
	}
	return false
}

// emit records a forward call and its autograd node.
func (r *rk) emit(o *opSpec, ins, outs []*tensor, bwd func(g []*tensor) []*tensor) string {
	if r.ph == truth.PhaseForward && bwd != nil && anyRG(ins) {
		for _, t := range outs {
			if t != nil && t.DT.IsFloat() {
				t.RG = true
			}
		}
	}
	if r.inject != nil && len(outs) > 0 && outs[0] != nil {
		r.inject(outs[0])
		r.inject = nil
	}
	base := r.op(o)
	if bwd != nil {
		r.push(base, o.vis, ins, outs, bwd)
	}
	return base
}

func args(ts ...*tensor) []arg {
	a := make([]arg, len(ts))
	for i, t := range ts {
		if t != nil {
			a[i] = t
		}
	}
	return a
}

func lastDim(t *tensor) int {
	if len(t.Shape) == 0 {
		return 1
	}
	return t.Shape[len(t.Shape)-1]
}

func shapeWithLast(s []int, last int) []int {
	o := append([]int(nil), s...)
	if len(o) == 0 {
		return []int{last}
	}
	o[len(o)-1] = last
	return o
}

// nz keeps a spread away from zero.
func nz(x float64) float64 {
	if x < 1e-12 || math.IsNaN(x) {
		return 1e-12
	}
	return x
}

// grad returns a gradient-like tensor: finite stats N(mean, std), flags
// from the sources.
func (r *rk) grad(shape []int, dt mw.DType, mean, std float64) *tensor {
	return r.g.normal(shape, dt, mean, nz(std))
}

// ---- creation ops ----

// view is a filtered shape op (chunk/view/transpose/reshape): same values.
func (r *rk) view(s *mw.Site, prefix, api string, x *tensor, shape []int, extra ...arg) *tensor {
	o := x.withShape(shape...)
	o.node = nil
	in := append([]arg{x}, extra...)
	r.emit(&opSpec{prefix: prefix, api: api, site: s, vis: visFiltered, in: in, out: args(o)},
		[]*tensor{x}, []*tensor{o}, func(g []*tensor) []*tensor {
			return []*tensor{g[0].withShape(x.Shape...)}
		})
	return o
}

// chunk3 splits the last dimension in three (Tensor.chunk, filtered).
func (r *rk) chunk3(s *mw.Site, x *tensor) (a, b, c *tensor) {
	sh := shapeWithLast(x.Shape, lastDim(x)/3)
	outs := make([]*tensor, 3)
	for i := range outs {
		outs[i] = r.g.normal(sh, x.DT, x.Mean, nz(x.Std))
		flagsPass(outs[i], x)
		settle(outs[i], x)
	}
	r.emit(&opSpec{prefix: "Tensor", api: "chunk", site: s, vis: visFiltered,
		in: args(x, nil)[:1], kw: []mw.KV{{Key: "dim", Value: mw.Int(-1)}}, out: args(outs...)},
		[]*tensor{x}, outs, func(g []*tensor) []*tensor {
			o := r.grad(x.Shape, x.DT, 0, rmsOf(g...))
			for _, t := range g {
				if t != nil {
					flagsAdd(o, o, t, false)
				}
			}
			return []*tensor{settle(o, g...)}
		})
	return outs[0], outs[1], outs[2]
}

func rmsOf(ts ...*tensor) float64 {
	s, n := 0.0, 0
	for _, t := range ts {
		if t != nil {
			s += t.rms() * t.rms()
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(s / float64(n))
}

// ---- layers ----

func (r *rk) embedding(s *mw.Site, ids, w *tensor) *tensor {
	shape := append(append([]int(nil), ids.Shape...), w.Shape[1])
	o := r.g.normal(shape, w.DT, w.Mean, w.rms())
	o.NaN, o.PInf, o.NInf = w.NaN, w.PInf, w.NInf
	settle(o, w)
	in := []arg{ids, w, nil, nil, mw.Float(2.0), mw.Bool(false), mw.Bool(false)}
	r.emit(&opSpec{prefix: "Functional", api: "embedding", site: s, in: in, out: args(o)},
		[]*tensor{ids, w}, []*tensor{o}, func(g []*tensor) []*tensor {
			n := float64(ids.Numel())
			gw := r.grad(w.Shape, w.DT, g[0].Mean*n/float64(w.Shape[0]), g[0].Std*math.Sqrt(n/float64(w.Shape[0])))
			gw.Min = math.Min(gw.Min, 0)
			gw.Max = math.Max(gw.Max, 0)
			flagsPass(gw, g[0])
			gw.Zero, gw.ZeroRow, gw.Spike = true, true, false
			return []*tensor{nil, settle(gw, g[0])}
		})
	return o
}

func (r *rk) layerNorm(s *mw.Site, x, w, b *tensor) *tensor {
	o := r.g.normal(x.Shape, x.DT, b.Mean, math.Abs(w.Mean)*math.Max(0.2, 1-0.05*r.g.u()))
	o.NaN = x.NaN || x.PInf || x.NInf || w.NaN || b.NaN
	o.born = !x.NaN && (x.PInf || x.NInf)
	o.PInf = !o.NaN && (w.PInf || b.PInf)
	o.NInf = !o.NaN && (w.NInf || b.NInf)
	settle(o, x, w, b)
	h := lastDim(x)
	in := []arg{x, mw.IntList{h}, w, b, mw.Float(1e-05)}
	r.emit(&opSpec{prefix: "Functional", api: "layer_norm", site: s, in: in, out: args(o)},
		[]*tensor{x, w, b}, []*tensor{o}, func(g []*tensor) []*tensor {
			gy := g[0]
			n := x.Numel() / float64(h)
			gx := r.grad(x.Shape, x.DT, 1e-12*r.g.n(), gy.rms()*math.Abs(w.Mean)/math.Max(x.rms(), 0.05))
			gw := r.grad(w.Shape, w.DT, gy.Mean*n*0.3, gy.rms()*math.Sqrt(n))
			gb := r.grad(b.Shape, b.DT, gy.Mean*n, gy.rms()*math.Sqrt(n))
			bad := gy.NaN || gy.PInf || gy.NInf || x.nonFinite()
			for _, t := range []*tensor{gx, gw, gb} {
				t.NaN = bad
				t.born = !gy.NaN && !x.NaN && bad
			}
			return []*tensor{settle(gx, gy, x), settle(gw, gy, x), settle(gb, gy)}
		})
	return o
}

// linear is Functional.linear; b may be nil. Site s is the F.linear line.
func (r *rk) linear(s *mw.Site, x, w, b *tensor) *tensor {
	in := float64(w.Shape[1])
	outF := w.Shape[0]
	mean := 0.0
	if b != nil {
		mean = b.Mean
	}
	dt := x.DT
	if w.DT != dt {
		dt = w.DT
	}
	o := r.g.normal(shapeWithLast(x.Shape, outF), dt, mean, nz(math.Sqrt(in)*x.rms()*w.Std))
	if x.Spike {
		o.Max = math.Max(o.Max, x.Max*w.Std*3)
	}
	if b != nil && b.Spike {
		// one output column carries the bias's extreme element
		o.Max = math.Max(o.Max, b.Max+(o.Max-o.Mean))
	}
	flagsMat(o, x, w)
	if b != nil {
		flagsAdd(o, o, b, false)
	}
	settle(o, x, w, b)
	r.emit(&opSpec{prefix: "Functional", api: "linear", site: s, in: args(x, w, b), out: args(o)},
		[]*tensor{x, w, b}, []*tensor{o}, func(g []*tensor) []*tensor {
			gy := g[0]
			tokens := x.Numel() / in
			gx := r.grad(x.Shape, x.DT, 0, math.Sqrt(float64(outF))*gy.rms()*w.Std)
			flagsMat(gx, gy, w)
			gw := r.grad(w.Shape, w.DT, gy.Mean*x.Mean*tokens, math.Sqrt(tokens)*gy.rms()*x.rms())
			flagsMat(gw, gy, x)
			if gy.allZero() && !w.nonFinite() && !x.nonFinite() {
				gx, gw = zeros(x.Shape, x.DT), zeros(w.Shape, w.DT)
			}
			res := []*tensor{settle(gx, gy, w), settle(gw, gy, x), nil}
			if b != nil {
				gb := r.grad(b.Shape, b.DT, gy.Mean*tokens, math.Sqrt(tokens)*gy.rms())
				flagsPass(gb, gy)
				gb.Zero, gb.ZeroRow, gb.FullRow = false, false, false
				res[2] = settle(gb, gy)
			}
			return res
		})
	return o
}

// matmul is Torch.matmul of a [.., m, k] and b [.., k, n].
func (r *rk) matmul(s *mw.Site, a, b *tensor, shape []int) *tensor {
	k := float64(lastDim(a))
	o := r.g.normal(shape, a.DT, a.Mean*b.Mean*k, nz(math.Sqrt(k)*a.rms()*b.rms()))
	flagsMat(o, a, b)
	settle(o, a, b)
	r.emit(&opSpec{prefix: "Torch", api: "matmul", site: s, in: args(a, b), out: args(o)},
		[]*tensor{a, b}, []*tensor{o}, func(g []*tensor) []*tensor {
			gy := g[0]
			ga := r.grad(a.Shape, a.DT, 0, nz(gy.rms()*b.rms()*math.Sqrt(float64(lastDim(b)))))
			flagsMat(ga, gy, b)
			gb := r.grad(b.Shape, b.DT, 0, nz(gy.rms()*a.rms()*math.Sqrt(float64(a.Shape[len(a.Shape)-2]))))
			flagsMat(gb, gy, a)
			return []*tensor{settle(ga, gy, b), settle(gb, gy, a)}
		})
	return o
}

// scale is Tensor.__mul__ by a Python float.
func (r *rk) scale(s *mw.Site, x *tensor, c float64) *tensor {
	ct := constant([]int{}, x.DT, c)
	o := x.clone()
	o.Max, o.Min = x.Max*c, x.Min*c
	if c < 0 {
		o.Max, o.Min = o.Min, o.Max
	}
	o.Mean, o.Norm, o.Std = x.Mean*c, x.Norm*math.Abs(c), x.Std*math.Abs(c)
	o.NaN, o.PInf, o.NInf = false, false, false
	flagsMul(o, x, ct)
	settle(o, x)
	r.emit(&opSpec{prefix: "Tensor", api: "__mul__", site: s, in: []arg{x, mw.Float(c)}, out: args(o)},
		[]*tensor{x}, []*tensor{o}, func(g []*tensor) []*tensor {
			gx := g[0].clone()
			gx.Max, gx.Min, gx.Mean, gx.Norm, gx.Std = g[0].Max*c, g[0].Min*c, g[0].Mean*c, g[0].Norm*c, g[0].Std*c
			if c < 0 {
				gx.Max, gx.Min = gx.Min, gx.Max
			}
			gx.NaN, gx.PInf, gx.NInf = false, false, false
			flagsMul(gx, g[0], ct)
			gx.RG = false
			return []*tensor{settle(gx, g[0])}
		})
	return o
}

// mul is Tensor.__mul__ of two tensors (broadcasting to a's shape).
func (r *rk) mul(s *mw.Site, a, b *tensor) *tensor {
	o := r.g.normal(a.Shape, a.DT, a.Mean*b.Mean, nz(math.Hypot(a.Std*b.rms(), b.Std*a.rms())))
	o.Max = math.Max(a.Max*b.Max, a.Min*b.Min)
	o.Min = math.Min(a.Max*b.Min, a.Min*b.Max)
	if o.Min > 0 && (a.Zero || b.Zero) {
		o.Min = 0
	}
	if o.Max < o.Mean {
		o.Max = o.Mean
	}
	if o.Min > o.Mean {
		o.Min = o.Mean
	}
	o.Norm = math.Sqrt(a.Numel()) * a.rms() * b.rms()
	if a == b {
		o.Min = math.Min(a.Max*a.Max, a.Min*a.Min)
		if a.Min < 0 && a.Max > 0 {
			o.Min = math.Min(a.Max, -a.Min) * 1e-4
		}
		if a.Zero || a.ZeroRow {
			o.Min = 0
		}
		o.Mean = a.Mean*a.Mean + a.Std*a.Std
		o.Max = math.Max(o.Max, o.Mean)
	}
	flagsMul(o, a, b)
	if (a.allZero() && !b.nonFinite()) || (b.allZero() && !a.nonFinite()) {
		o = zeros(a.Shape, a.DT)
	}
	settle(o, a, b)
	r.emit(&opSpec{prefix: "Tensor", api: "__mul__", site: s, in: args(a, b), out: args(o)},
		[]*tensor{a, b}, []*tensor{o}, func(g []*tensor) []*tensor {
			gy := g[0]
			ga := r.grad(a.Shape, a.DT, gy.Mean*b.Mean, nz(gy.rms()*b.rms()))
			flagsMul(ga, gy, b)
			gb := r.grad(b.Shape, b.DT, gy.Mean*a.Mean, nz(gy.rms()*a.rms()*math.Sqrt(a.Numel()/b.Numel())))
			flagsMul(gb, gy, a)
			if (b.allZero() || gy.allZero()) && !gy.nonFinite() && !b.nonFinite() {
				ga = zeros(a.Shape, a.DT)
			}
			if (a.allZero() || gy.allZero()) && !gy.nonFinite() && !a.nonFinite() {
				gb = zeros(b.Shape, b.DT)
			}
			return []*tensor{settle(ga, gy, b), settle(gb, gy, a)}
		})
	return o
}

// add is Tensor.__add__ (sub: Tensor.__sub__) of two tensors; the result
// has a's shape (b broadcasts).
func (r *rk) add(s *mw.Site, a, b *tensor, sub bool) *tensor {
	sign := 1.0
	api := "__add__"
	if sub {
		sign, api = -1, "__sub__"
	}
	o := r.g.normal(a.Shape, a.DT, a.Mean+sign*b.Mean, nz(math.Hypot(a.Std, b.Std)))
	if b.NoFinite || (b.NInf && b.Max == 0 && b.Min == 0) {
		// adding a mask: finite part unchanged
		o.Max, o.Min, o.Mean, o.Norm = a.Max, a.Min, a.Mean, a.Norm
	}
	if a.Spike || b.Spike {
		o.Max = math.Max(o.Max, math.Max(a.Max, b.Max))
		o.Spike = true
	}
	flagsAdd(o, a, b, sub)
	o.Zero = sub && a.ZeroRow && b.ZeroRow
	o.ZeroRow = o.Zero
	settle(o, a, b)
	r.emit(&opSpec{prefix: "Tensor", api: api, site: s, in: args(a, b), out: args(o)},
		[]*tensor{a, b}, []*tensor{o}, func(g []*tensor) []*tensor {
			ga := g[0].clone()
			gb := g[0].clone()
			if sub {
				gb.Max, gb.Min, gb.Mean = -g[0].Min, -g[0].Max, -g[0].Mean
				gb.PInf, gb.NInf = g[0].NInf, g[0].PInf
			}
			if !sameShape(b.Shape, a.Shape) {
				gb = r.grad(b.Shape, b.DT, g[0].Mean, g[0].Std)
				flagsPass(gb, g[0])
			}
			ga.RG, gb.RG = false, false
			return []*tensor{settle(ga, g[0]), settle(gb, g[0])}
		})
	return o
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// truediv is Tensor.__truediv__ of a by b (b broadcast).
func (r *rk) truediv(s *mw.Site, a, b *tensor) *tensor {
	bm := b.Mean
	if math.Abs(bm) < 1e-30 {
		bm = 1e-30
	}
	o := r.quotient(a, b)
	bInf := b.PInf || b.NInf
	r.emit(&opSpec{prefix: "Tensor", api: "__truediv__", site: s, in: args(a, b), out: args(o)},
		[]*tensor{a, b}, []*tensor{o}, func(g []*tensor) []*tensor {
			gy := g[0]
			ga := r.grad(a.Shape, a.DT, gy.Mean/bm, nz(gy.Std/math.Abs(bm)))
			flagsPass(ga, gy)
			if gy.nonFinite() || o.nonFinite() || b.nonFinite() {
				ga.NaN = ga.NaN || o.NaN || bInf
			}
			gb := r.grad(b.Shape, b.DT, -gy.Mean/bm, nz(gy.Std/math.Abs(bm)))
			gb.NaN = gy.nonFinite() || o.nonFinite() || b.nonFinite()
			return []*tensor{settle(ga, gy, o, b), settle(gb, gy, o, b)}
		})
	return o
}

// quotient is the value of a / b (b broadcast), without a record.
func (r *rk) quotient(a, b *tensor) *tensor {
	bm := b.Mean
	if math.Abs(bm) < 1e-30 {
		bm = 1e-30
	}
	o := r.g.normal(a.Shape, a.DT, a.Mean/bm, nz(a.Std/math.Abs(bm)))
	if b.Min > 0 && a.Min >= 0 {
		o.Max = math.Min(1, a.Max/b.Min)
		o.Min = a.Min / b.Max
		o.Mean = math.Min(o.Mean, o.Max)
	}
	o.NaN = a.NaN || b.NaN
	aInf, bInf := a.PInf || a.NInf, b.PInf || b.NInf
	switch {
	case aInf && bInf, (a.Zero || a.ZeroRow) && b.Zero:
		o.NaN, o.born = true, true
	case aInf:
		o.PInf, o.NInf = a.PInf, a.NInf
	case b.Zero:
		o.PInf, o.NInf, o.born = true, a.Min < 0, true
	}
	mergeRows(o, a, b)
	return settle(o, a, b)
}
