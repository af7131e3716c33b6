package sim

import (
	"math"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
)

// customAttention is moe_ext.kernels.fused_attention(q, k, v, rel_bias,
// causal=True, softmax_scale=scale), a kernel registered with
// register_custom_api. used is the bitmask of relative-position buckets the
// batch reaches.
func (r *rk) customAttention(s *mw.Site, q, k, v, bias *tensor, scale float64, used uint64) *tensor {
	o := r.g.normal(q.Shape, q.DT, v.Mean*0.3, nz(v.rms()*0.55))
	o.NaN = q.NaN || k.NaN || v.NaN || q.PInf || q.NInf || k.PInf || k.NInf
	o.PInf, o.NInf = v.PInf && !o.NaN, v.NInf && !o.NaN
	biasHit := bias.nonFinite() && (bias.Rows == 0 || bias.Rows&used != 0)
	if biasHit {
		o.NaN = true
	}
	srcs := []*tensor{q, k, v}
	if biasHit {
		srcs = append(srcs, bias)
	}
	settle(o, srcs...)
	r.emit(&opSpec{prefix: "moe_ext.kernels", api: "fused_attention", site: s, in: args(q, k, v, bias),
		kw: []mw.KV{{Key: "causal", Value: mw.Bool(true)}, {Key: "softmax_scale", Value: mw.Float(scale)}}, out: args(o),
		inT: []*tensor{q, k, v, effBias(bias, used)}},
		[]*tensor{q, k, v, bias}, []*tensor{o}, func(g []*tensor) []*tensor {
			gy := g[0]
			bad := gy.nonFinite() || o.NaN
			mk := func(t *tensor, std float64) *tensor {
				x := r.grad(t.Shape, t.DT, 0, nz(std))
				x.NaN = bad
				x.PInf = !bad && (gy.PInf || gy.NInf)
				x.NInf = x.PInf
				return settle(x, gy, o)
			}
			dq := mk(q, gy.rms()*k.rms()*scale*2)
			dk := mk(k, gy.rms()*q.rms()*scale*2)
			dv := mk(v, gy.rms()*0.8)
			db := r.grad(bias.Shape, bias.DT, 0, nz(gy.rms()*math.Sqrt(gy.Numel()/bias.Numel())*0.05))
			db.NaN = bad
			return []*tensor{dq, dk, dv, settle(db, gy, o)}
		})
	return o
}

// effBias is the part of the bias table a call reads: clean when its
// non-finite rows are not reached.
func effBias(b *tensor, used uint64) *tensor {
	if b.nonFinite() && b.Rows != 0 && b.Rows&used == 0 {
		c := b.clone()
		c.NaN, c.PInf, c.NInf = false, false, false
		return c
	}
	return b
}

// ---- masks (no autograd) ----

// full is Torch.full((s, s), float('-inf')).
func (r *rk) full(s *mw.Site, n int, dt mw.DType) *tensor {
	o := &tensor{Tensor: mw.Tensor{Shape: []int{n, n}, DT: dt, NInf: true, NoFinite: true}, Legit: true}
	r.op(&opSpec{prefix: "Torch", api: "full", site: s, legit: true,
		in: []arg{mw.List{mw.Int(n), mw.Int(n)}, mw.Float(math.Inf(-1))}, out: args(o)})
	return o
}

// triu is Torch.triu(x, diagonal=1).
func (r *rk) triu(s *mw.Site, x *tensor) *tensor {
	o := &tensor{Tensor: mw.Tensor{Shape: x.Shape, DT: x.DT}}
	if x.DT == mw.DTBool {
		o.Max = x.Max
	} else {
		o.NInf, o.Zero, o.Legit = x.NInf, true, true
	}
	r.op(&opSpec{prefix: "Torch", api: "triu", site: s, legit: true, in: args(x),
		kw: []mw.KV{{Key: "diagonal", Value: mw.Int(1)}}, out: args(o)})
	return o
}

// ones is Torch.ones(n, n, dtype=torch.bool).
func (r *rk) onesBool(s *mw.Site, n int) *tensor {
	o := bools([]int{n, n}, true, true)
	r.op(&opSpec{prefix: "Torch", api: "ones", site: s, in: []arg{mw.Int(n), mw.Int(n)},
		kw: []mw.KV{{Key: "dtype", Value: mw.DTypeName("torch.bool")}}, out: args(o)})
	return o
}

// padMask is Tensor.__eq__(tokens, pad_id).
func (r *rk) padMask(s *mw.Site, tokens *tensor, padded bool) *tensor {
	o := bools(tokens.Shape, padded, false)
	r.op(&opSpec{prefix: "Tensor", api: "__eq__", site: s, in: []arg{tokens, mw.Int(0)}, out: args(o)})
	return o
}

// orMask is Tensor.__or__(causal, pad[:, None, None, :]).
func (r *rk) orMask(s *mw.Site, causal, pad *tensor, b int) *tensor {
	pv := pad.clone()
	pv.Shape = []int{b, 1, 1, pad.Shape[1]}
	o := bools([]int{b, 1, causal.Shape[0], causal.Shape[1]}, true, false)
	o.FullRow = pad.Max != 0
	r.op(&opSpec{prefix: "Tensor", api: "__or__", site: s, in: args(causal, pv), out: args(o)})
	return o
}

// ---- MoE ----

// topk is Torch.topk(probs, k, dim=-1): values and indices.
func (r *rk) topk(s *mw.Site, probs *tensor, k, experts int) (*tensor, *tensor) {
	sh := shapeWithLast(probs.Shape, k)
	lo := math.Max(probs.Min, 0.9/float64(experts))
	vals := r.g.positive(sh, probs.DT, lo, (probs.Max+lo)/2, probs.Max)
	vals.NaN = probs.NaN
	settle(vals, probs)
	idx := ints(sh, 0, int64(experts-1))
	if probs.NaN {
		idx.Min, idx.Max = 0, 0
	}
	r.emit(&opSpec{prefix: "Torch", api: "topk", site: s, in: []arg{probs, mw.Int(k)}, kw: []mw.KV{{Key: "dim", Value: mw.Int(-1)}},
		out: args(vals, idx)}, []*tensor{probs}, []*tensor{vals, idx}, func(g []*tensor) []*tensor {
		gp := r.grad(probs.Shape, probs.DT, 0, nz(rmsOf(g[0])*0.5))
		if g[0] != nil {
			flagsPass(gp, g[0])
		}
		gp.Zero = true
		return []*tensor{settle(gp, g[0])}
	})
	return vals, idx
}

// bincount is Torch.bincount(idx.view(-1), minlength=E).
func (r *rk) bincount(s *mw.Site, idx *tensor, counts []int) *tensor {
	lo, hi := counts[0], counts[0]
	for _, c := range counts {
		lo, hi = min(lo, c), max(hi, c)
	}
	flat := idx.clone()
	flat.Shape = []int{int(idx.Numel())}
	o := ints([]int{len(counts)}, int64(lo), int64(hi))
	r.op(&opSpec{prefix: "Torch", api: "bincount", site: s, in: args(flat), kw: []mw.KV{{Key: "minlength", Value: mw.Int(len(counts))}}, out: args(o)})
	return o
}

// indexSelect is Tensor.index_select(x, 0, order).
func (r *rk) indexSelect(s *mw.Site, x, order *tensor, n int) *tensor {
	o := x.withShape(n, lastDim(x))
	o.Spike = false
	r.emit(&opSpec{prefix: "Tensor", api: "index_select", site: s, in: []arg{x, mw.Int(0), order}, out: args(o)},
		[]*tensor{x, order}, []*tensor{o}, func(g []*tensor) []*tensor {
			gx := r.grad(x.Shape, x.DT, g[0].Mean*o.Numel()/x.Numel(), nz(g[0].Std*math.Sqrt(o.Numel()/x.Numel())))
			flagsPass(gx, g[0])
			gx.Zero, gx.ZeroRow = false, false
			return []*tensor{settle(gx, g[0]), nil}
		})
	return o
}

// indexAdd is Tensor.index_add_(y, 0, idx, src) into zeros y.
func (r *rk) indexAdd(s *mw.Site, y, idx, src *tensor) *tensor {
	n := float64(src.Shape[0]) / float64(y.Shape[0])
	o := r.g.normal(y.Shape, src.DT, src.Mean*n, nz(src.Std*math.Sqrt(n)))
	flagsPass(o, src)
	o.Zero, o.ZeroRow = false, false
	settle(o, src)
	r.emit(&opSpec{prefix: "Tensor", api: "index_add_", site: s, in: []arg{y, mw.Int(0), idx, src}, out: args(o),
		inT: []*tensor{y, src}}, []*tensor{y, idx, src}, []*tensor{o}, func(g []*tensor) []*tensor {
		gs := g[0].withShape(src.Shape...)
		gs.RG = false
		return []*tensor{nil, nil, settle(gs, g[0])}
	})
	return o
}

// splitRows is the filtered Tensor.split of x into row blocks.
func (r *rk) splitRows(s *mw.Site, x *tensor, rows []int, flags []*tensor) []*tensor {
	outs := make([]*tensor, len(rows))
	for i, n := range rows {
		o := x.withShape(n, lastDim(x))
		if flags != nil && flags[i] != nil {
			f := flags[i]
			o.NaN, o.PInf, o.NInf, o.ZeroRow, o.Zero = f.NaN, f.PInf, f.NInf, f.ZeroRow, f.ZeroRow
			o.Legit = false
		}
		if n == 0 {
			o.Empty = true
		}
		outs[i] = o
	}
	r.emit(&opSpec{prefix: "Tensor", api: "split", site: s, vis: visFiltered, in: []arg{x, mw.IntList(rows)}, out: args(outs...)},
		[]*tensor{x}, outs, func(g []*tensor) []*tensor {
			gx := r.grad(x.Shape, x.DT, 0, nz(rmsOf(g...)))
			for _, t := range g {
				if t != nil {
					gx.NaN = gx.NaN || t.NaN
					gx.PInf = gx.PInf || t.PInf
					gx.NInf = gx.NInf || t.NInf
				}
			}
			return []*tensor{settle(gx, g...)}
		})
	return outs
}

// catRows is the filtered Torch.cat of row blocks.
func (r *rk) catRows(s *mw.Site, parts []*tensor, rows int, dt mw.DType, h int) *tensor {
	o := &tensor{Tensor: mw.Tensor{Shape: []int{rows, h}, DT: dt}}
	first := true
	var ins []*tensor
	for _, p := range parts {
		if p == nil {
			continue
		}
		ins = append(ins, p)
		if first {
			*o = *p.clone()
			o.Shape = []int{rows, h}
			first = false
			continue
		}
		o.Max, o.Min = math.Max(o.Max, p.Max), math.Min(o.Min, p.Min)
		o.Norm = math.Hypot(o.Norm, p.Norm)
		o.NaN, o.PInf, o.NInf = o.NaN || p.NaN, o.PInf || p.PInf, o.NInf || p.NInf
	}
	if first {
		o.Empty = true
	}
	settle(o, ins...)
	r.emit(&opSpec{prefix: "Torch", api: "cat", site: s, vis: visFiltered, in: []arg{mw.List(tensorArgs(ins))}, out: args(o)},
		ins, []*tensor{o}, func(g []*tensor) []*tensor {
			res := make([]*tensor, len(ins))
			for i, p := range ins {
				gp := g[0].withShape(p.Shape...)
				gp.RG = false
				res[i] = gp
			}
			return res
		})
	return o
}
