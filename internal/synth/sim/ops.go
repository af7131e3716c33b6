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

// softmax over the last dimension (prefix Functional or Torch).
func (r *rk) softmax(s *mw.Site, prefix string, x *tensor, kw []mw.KV, dt mw.DType) *tensor {
	n := float64(lastDim(x))
	o := &tensor{Tensor: mw.Tensor{Shape: x.Shape, DT: dt, Mean: 1 / n}}
	spread := math.Exp(math.Min(2.5*x.Std, 30))
	o.Max = spread / (spread + n - 1)
	o.Min = 1 / (1 + (n-1)*spread)
	if x.NInf {
		o.Max, o.Min, o.Zero = 1, 0, true
	}
	o.Std = o.Max / 4
	o.Norm = math.Sqrt(x.Numel()/n) * math.Min(1, math.Sqrt(1+x.Std*x.Std)/math.Sqrt(n))
	if x.NInf {
		o.Norm = math.Sqrt(x.Numel()/n) * math.Min(1, 1.6/math.Sqrt(n)+0.1)
	}
	o.NaN = x.NaN
	if x.PInf || x.FullRow {
		o.NaN, o.born = true, true
	}
	settle(o, x)
	r.emit(&opSpec{prefix: prefix, api: "softmax", site: s, in: args(x), kw: kw, out: args(o)},
		[]*tensor{x}, []*tensor{o}, func(g []*tensor) []*tensor {
			// dx = p∘(dy − Σ p·dy): about dy scaled by the typical
			// probability, so the spread is that of dy times rms(p)
			gy := g[0]
			gx := r.grad(x.Shape, x.DT, 1e-13*r.g.n(), nz(gy.rms()*o.rms()))
			gx.NaN = gy.nonFinite() || o.NaN
			gx.born = gx.NaN && !gy.NaN && !o.NaN
			if x.NInf {
				gx.Zero = true
			}
			return []*tensor{settle(gx, gy, o)}
		})
	return o
}

// maskedFill is Tensor.masked_fill(x, mask, -inf): a legitimate -inf.
func (r *rk) maskedFill(s *mw.Site, x, mask *tensor) *tensor {
	o := x.clone()
	o.node = nil
	o.NInf = mask.Max != 0
	o.FullRow = mask.FullRow
	o.Legit = true
	r.emit(&opSpec{prefix: "Tensor", api: "masked_fill", site: s, legit: true,
		in: []arg{x, mask, mw.Float(math.Inf(-1))}, out: args(o)},
		[]*tensor{x, mask}, []*tensor{o}, func(g []*tensor) []*tensor {
			gx := g[0].clone()
			gx.Zero, gx.RG = true, false
			return []*tensor{settle(gx, g[0]), nil}
		})
	return o
}

// gelu is Functional.gelu.
func (r *rk) gelu(s *mw.Site, x *tensor) *tensor {
	ge := func(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) }
	o := &tensor{Tensor: mw.Tensor{Shape: x.Shape, DT: x.DT}}
	o.Max = ge(x.Max)
	o.Min = math.Max(-0.16997, math.Min(ge(x.Min), -0.17*math.Min(1, x.Std)))
	o.Mean = 0.5*x.Mean + 0.4*x.Std*x.Std/(1+x.Std)
	o.Std = 0.6 * x.Std
	o.Norm = math.Sqrt(x.Numel() * (o.Mean*o.Mean + o.Std*o.Std))
	o.Spike = x.Spike
	o.NaN = x.NaN
	o.PInf = x.PInf
	if x.NInf {
		o.NaN, o.born = true, true
	}
	mergeRows(o, x)
	settle(o, x)
	r.emit(&opSpec{prefix: "Functional", api: "gelu", site: s, in: args(x), kw: []mw.KV{{Key: "approximate", Value: mw.Str("none")}}, out: args(o)},
		[]*tensor{x}, []*tensor{o}, func(g []*tensor) []*tensor {
			gy := g[0]
			gx := r.grad(x.Shape, x.DT, gy.Mean*0.5, nz(gy.Std*0.7))
			flagsPass(gx, gy)
			if x.nonFinite() {
				gx.NaN = true
			}
			return []*tensor{settle(gx, gy, x)}
		})
	return o
}

// unary is an elementwise Torch/tensor function with its own value map.
type unaryRule struct {
	api    string
	prefix string
	fwd    func(o, x *tensor)
	bwd    func(gx, gy, x, y *tensor)
}

func (r *rk) unary(s *mw.Site, u unaryRule, x *tensor, extra []arg, kw []mw.KV) *tensor {
	o := &tensor{Tensor: mw.Tensor{Shape: x.Shape, DT: x.DT}}
	u.fwd(o, x)
	settle(o, x)
	in := append([]arg{x}, extra...)
	r.emit(&opSpec{prefix: u.prefix, api: u.api, site: s, in: in, kw: kw, out: args(o)},
		[]*tensor{x}, []*tensor{o}, func(g []*tensor) []*tensor {
			gy := g[0]
			gx := &tensor{Tensor: mw.Tensor{Shape: x.Shape, DT: x.DT}}
			u.bwd(gx, gy, x, o)
			return []*tensor{settle(gx, gy, x, o)}
		})
	return o
}

// gradLike fills gx as a gradient of spread std and copies gy's flags.
func (r *rk) gradLike(gx, gy *tensor, mean, std float64) {
	t := r.grad(gx.Shape, gx.DT, mean, std)
	t.DT = gx.DT
	*gx = *t
	flagsPass(gx, gy)
	gx.Zero, gx.ZeroRow, gx.FullRow = false, false, false
}

func (r *rk) exp(s *mw.Site, x *tensor) *tensor {
	return r.unary(s, unaryRule{api: "exp", prefix: "Torch", fwd: func(o, x *tensor) {
		o.Max, o.Min = math.Exp(x.Max), math.Exp(x.Min)
		o.Mean = math.Min(o.Max, math.Exp(x.Mean+x.Std*x.Std/2))
		o.Norm = math.Sqrt(x.Numel()) * math.Min(o.Max, math.Exp(x.Mean+x.Std*x.Std))
		o.Std = o.Mean
		o.NaN, o.PInf = x.NaN, x.PInf
		if x.NInf {
			o.Min, o.Zero = 0, true
		}
		mergeRows(o, x)
	}, bwd: func(gx, gy, x, y *tensor) {
		r.gradLike(gx, gy, gy.Mean*y.Mean, gy.Std*y.Mean)
		flagsMul(gx, gy, y)
	}}, x, nil, nil)
}

func (r *rk) log(s *mw.Site, x *tensor) *tensor {
	return r.unary(s, unaryRule{api: "log", prefix: "Torch", fwd: func(o, x *tensor) {
		lo := math.Max(x.Min, 1e-30)
		o.Max, o.Min = math.Log(math.Max(x.Max, lo)), math.Log(lo)
		o.Mean = math.Log(math.Max(x.Mean, 1e-30)) - x.Std*x.Std/(2*x.Mean*x.Mean+1e-30)
		o.Std = x.Std / math.Max(x.Mean, 1e-3)
		o.Norm = math.Sqrt(x.Numel() * (o.Mean*o.Mean + o.Std*o.Std))
		o.NaN, o.PInf = x.NaN, x.PInf
		if x.Min < 0 {
			o.NaN, o.born = true, true
		} else if x.Min == 0 || x.Zero {
			o.NInf, o.born = true, true
			o.Min = math.Log(math.Max(x.Mean/10, 1e-30))
		}
		mergeRows(o, x)
	}, bwd: func(gx, gy, x, y *tensor) {
		r.gradLike(gx, gy, gy.Mean/math.Max(x.Mean, 1e-3), gy.Std/math.Max(x.Mean, 1e-3))
		if x.Min == 0 || x.Zero {
			gx.PInf, gx.born = true, !gy.nonFinite()
		}
		if x.Min < 0 || x.NaN {
			gx.NaN = true
		}
	}}, x, nil, nil)
}

func (r *rk) sqrt(s *mw.Site, prefix string, x *tensor) *tensor {
	return r.unary(s, unaryRule{api: "sqrt", prefix: prefix, fwd: func(o, x *tensor) {
		o.Max, o.Min = math.Sqrt(math.Max(x.Max, 0)), math.Sqrt(math.Max(x.Min, 0))
		o.Mean = math.Sqrt(math.Max(x.Mean, 0)) * 0.97
		o.Mean = math.Max(math.Min(o.Mean, o.Max), o.Min)
		o.Std = (o.Max - o.Min) / 4
		o.Norm = math.Sqrt(x.Numel() * math.Max(x.Mean, 0))
		o.Zero, o.ZeroRow = x.Zero, x.ZeroRow
		o.NaN, o.PInf = x.NaN, x.PInf
		if x.Min < 0 {
			o.NaN, o.born = true, true
		}
		mergeRows(o, x)
	}, bwd: func(gx, gy, x, y *tensor) {
		m := math.Max(y.Mean, 1e-6)
		r.gradLike(gx, gy, gy.Mean/(2*m), gy.Std/(2*m))
		if y.Zero {
			gx.PInf, gx.born = true, !gy.nonFinite()
			gx.Spike = false
		}
		if y.NaN {
			gx.NaN = true
		}
	}}, x, nil, nil)
}

func (r *rk) rsqrt(s *mw.Site, x *tensor) *tensor {
	return r.unary(s, unaryRule{api: "rsqrt", prefix: "Torch", fwd: func(o, x *tensor) {
		o.Max = 1 / math.Sqrt(math.Max(x.Min, 1e-30))
		o.Min = 1 / math.Sqrt(math.Max(x.Max, 1e-30))
		o.Mean = 1 / math.Sqrt(math.Max(x.Mean, 1e-30))
		o.Mean = math.Max(math.Min(o.Mean, o.Max), o.Min)
		o.Std = (o.Max - o.Min) / 4
		o.Norm = math.Sqrt(x.Numel()) * o.Mean
		o.NaN, o.Zero = x.NaN, x.PInf
		if x.Min < 0 {
			o.NaN, o.born = true, true
		}
		if x.Zero || x.Min == 0 {
			o.PInf, o.born = true, true
			o.Max = 1 / math.Sqrt(math.Max(x.Mean, 1e-30)) * 3
		}
		mergeRows(o, x)
	}, bwd: func(gx, gy, x, y *tensor) {
		r.gradLike(gx, gy, -gy.Mean*y.Mean/(2*math.Max(x.Mean, 1e-30)), gy.Std*y.Mean/(2*math.Max(x.Mean, 1e-30)))
		flagsMul(gx, gy, y)
	}}, x, nil, nil)
}

func (r *rk) pow2(s *mw.Site, x *tensor) *tensor {
	return r.unary(s, unaryRule{api: "pow", prefix: "Tensor", fwd: func(o, x *tensor) {
		o.Max = math.Max(x.Max*x.Max, x.Min*x.Min)
		o.Min = 0
		if x.Min > 0 {
			o.Min = x.Min * x.Min
		} else if x.Max < 0 {
			o.Min = x.Max * x.Max
		}
		o.Mean = x.Mean*x.Mean + x.Std*x.Std
		o.Std = o.Mean
		o.Norm = math.Sqrt(x.Numel()*3) * o.Mean
		o.Zero, o.ZeroRow = x.Zero || x.ZeroRow, x.ZeroRow
		o.NaN = x.NaN
		o.PInf = x.PInf || x.NInf
		mergeRows(o, x)
	}, bwd: func(gx, gy, x, y *tensor) {
		r.gradLike(gx, gy, 2*gy.Mean*x.Mean, 2*gy.rms()*x.rms())
		flagsMul(gx, gy, x)
	}}, x, []arg{mw.Int(2)}, nil)
}

// reduceLast is Tensor.sum / Tensor.mean over the last dimension with
// keepdim.
func (r *rk) reduceLast(s *mw.Site, api string, x *tensor) *tensor {
	n := float64(lastDim(x))
	f := 1.0
	if api == "sum" {
		f = n
	}
	shape := shapeWithLast(x.Shape, 1)
	var o *tensor
	if x.Min >= 0 {
		o = r.g.positive(shape, x.DT, 0, x.Mean*f, math.Min(x.Max, x.Mean+2*x.Std)*f)
		o.Min = math.Max(0, x.Mean-2*x.Std/math.Sqrt(n)) * f
		if x.ZeroRow {
			o.Min = 0
		}
	} else {
		o = r.g.normal(shape, x.DT, x.Mean*f, nz(x.Std*f/math.Sqrt(n)))
	}
	o.NaN = x.NaN
	o.PInf, o.NInf = x.PInf, x.NInf
	if x.PInf && x.NInf {
		o.NaN, o.born = true, true
	}
	o.Zero, o.ZeroRow = x.ZeroRow, x.ZeroRow
	mergeRows(o, x)
	settle(o, x)
	var in []arg
	var kw []mw.KV
	if api == "sum" {
		in, kw = args(x), []mw.KV{{Key: "dim", Value: mw.Int(-1)}, {Key: "keepdim", Value: mw.Bool(true)}}
	} else {
		in, kw = []arg{x, mw.Int(-1)}, []mw.KV{{Key: "keepdim", Value: mw.Bool(true)}}
	}
	r.emit(&opSpec{prefix: "Tensor", api: api, site: s, in: in, kw: kw, out: args(o)},
		[]*tensor{x}, []*tensor{o}, func(g []*tensor) []*tensor {
			// d sum/dx = 1, d mean/dx = 1/n
			gy := g[0]
			c := f / n
			gx := r.grad(x.Shape, x.DT, gy.Mean*c, nz(gy.Std*c))
			flagsPass(gx, gy)
			gx.Zero, gx.ZeroRow = false, false
			return []*tensor{settle(gx, gy)}
		})
	return o
}

// cast is Tensor.half / Tensor.float.
func (r *rk) cast(s *mw.Site, api string, x *tensor, dt mw.DType) *tensor {
	o := x.clone()
	o.DT = dt
	o.Legit = false
	settle(o, x)
	r.emit(&opSpec{prefix: "Tensor", api: api, site: s, in: args(x), out: args(o)},
		[]*tensor{x}, []*tensor{o}, func(g []*tensor) []*tensor {
			gx := g[0].clone()
			gx.DT = x.DT
			gx.RG = false
			return []*tensor{settle(gx, g[0])}
		})
	return o
}

func (r *rk) pad(s *mw.Site, x *tensor, front int) *tensor {
	shape := append([]int(nil), x.Shape...)
	shape[len(shape)-2] += front
	o := x.withShape(shape...)
	o.Norm = x.Norm
	o.Min = math.Min(x.Min, 0)
	o.Zero = true
	o.Mean = x.Mean * x.Numel() / o.Numel()
	r.emit(&opSpec{prefix: "Functional", api: "pad", site: s, in: []arg{x, mw.IntList{0, 0, front, 0}}, out: args(o)},
		[]*tensor{x}, []*tensor{o}, func(g []*tensor) []*tensor {
			gx := g[0].withShape(x.Shape...)
			gx.RG = false
			return []*tensor{settle(gx, g[0])}
		})
	return o
}

func (r *rk) crossEntropy(s *mw.Site, logits, labels *tensor) *tensor {
	v := float64(lastDim(logits))
	base := math.Log(v) * math.Max(0.35, 1-0.04*float64(r.step))
	loss := scalar(mw.DTFloat32, base+0.05*r.g.n())
	loss.NaN = logits.NaN || logits.PInf || logits.NInf
	settle(loss, logits)
	r.emit(&opSpec{prefix: "Functional", api: "cross_entropy", site: s, in: args(logits, labels), out: args(loss)},
		[]*tensor{logits, labels}, []*tensor{loss}, func(g []*tensor) []*tensor {
			n := float64(labels.Numel())
			c := 1.0 // the incoming gradient: 1, or the loss scale
			if s := g[0]; s != nil && !s.nonFinite() && s.Max > 0 {
				c = s.Max
			}
			gl := &tensor{Tensor: mw.Tensor{Shape: logits.Shape, DT: logits.DT}}
			gl.Max = c * math.Min(1, math.Exp(2.5*logits.Std)/v) / n
			gl.Min = -c * (1 - 1/v) / n
			gl.Mean = c * 2e-12 * r.g.n() / n
			gl.Std = c / (n * math.Sqrt(v))
			gl.Norm = c * math.Sqrt(n) / n * 0.95
			gl.NaN = g[0].nonFinite() || loss.nonFinite() || logits.nonFinite()
			return []*tensor{settle(gl, g[0], logits), nil}
		})
	return loss
}

// tensorArgs are ts as arguments (a nil tensor is null).
func tensorArgs(ts []*tensor) []arg {
	a := make([]arg, len(ts))
	for i, t := range ts {
		if t != nil {
			a[i] = t
		}
	}
	return a
}
