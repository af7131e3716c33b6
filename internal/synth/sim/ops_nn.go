package sim

// The ops of the network beyond linear algebra: softmax, masks,
// activations and elementwise functions, reductions, casts, padding and
// the loss.

import (
	"math"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
)

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
	base := math.Log(v) * math.Max(0.35, 1-0.04*float64(r.step)) * r.lossSpike()
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
