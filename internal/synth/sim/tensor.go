package sim

import (
	"math"
	"math/rand/v2"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
)

// tensor is an abstract tensor: what msprobe records of it (shape, dtype,
// the statistics of its finite elements, which non-finite values it
// holds), and what the arithmetic rules derive new tensors from.
type tensor struct {
	mw.Tensor
	// Std is the spread the rules derive new tensors from.
	Std float64
	// Zero: some elements are exactly zero. ZeroRow: some whole rows of
	// the last dimension are zero. FullRow: some rows of the last
	// dimension are entirely masked (-inf, or true in a mask).
	Zero, ZeroRow, FullRow bool
	// Spike: the extreme value sits at the same element on every rank
	// (so a sum over ranks adds the extremes).
	Spike bool
	// SpikeLow: the smallest value too sits at the same element on every
	// rank.
	SpikeLow bool
	// Legit: the non-finite values are legitimate (masks, garbage in
	// buffers about to be overwritten).
	Legit bool

	born  bool // this op created new non-finite values
	node  *node
	param *param
}

// Written is what msprobe records of t (nil for a nil tensor, written as
// null).
func (t *tensor) Written() *mw.Tensor {
	if t == nil {
		return nil
	}
	return &t.Tensor
}

func (t *tensor) nonFinite() bool { return t.NaN || t.PInf || t.NInf }

// allZero reports a tensor whose every element is exactly zero.
func (t *tensor) allZero() bool {
	return t != nil && !t.Empty && !t.nonFinite() && t.Max == 0 && t.Min == 0
}

// tainted reports non-finite values that are not legitimate.
func (t *tensor) tainted() bool { return t != nil && t.nonFinite() && !t.Legit }

// rms is the root mean square of the finite elements.
func (t *tensor) rms() float64 {
	n := t.Numel()
	if n <= 0 {
		return 0
	}
	return t.Norm / math.Sqrt(n)
}

// clone returns a copy without autograd links.
func (t *tensor) clone() *tensor {
	c := *t
	c.node, c.param, c.born = nil, nil, false
	return &c
}

// withShape returns a copy with another shape (a view).
func (t *tensor) withShape(shape ...int) *tensor {
	c := t.clone()
	c.Shape = shape
	n := c.Numel()
	if on := t.Numel(); on > 0 && n != on {
		c.Norm = t.Norm * math.Sqrt(n/on)
	}
	return c
}

// gen is a deterministic random source.
type gen struct{ r *rand.Rand }

func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// strKey is the FNV-1a hash of s.
func strKey(s string) uint64 { return fnvAdd(fnvOffset, s) }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvAdd continues an FNV-1a hash with the bytes of s.
func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func newGen(keys ...uint64) *gen {
	a, b := uint64(0x243f6a8885a308d3), uint64(0x13198a2e03707344)
	for _, k := range keys {
		a = mix64(a ^ k)
		b = mix64(b + k)
	}
	return &gen{rand.New(rand.NewPCG(a, b))}
}

func (g *gen) n() float64 { return g.r.NormFloat64() }
func (g *gen) u() float64 { return g.r.Float64() }

// in returns a uniform value in [lo, hi).
func (g *gen) in(lo, hi float64) float64 { return lo + (hi-lo)*g.r.Float64() }

func (g *gen) gumbel() float64 {
	u := g.r.Float64()
	for u <= 1e-300 {
		u = g.r.Float64()
	}
	return -math.Log(-math.Log(u))
}

// extreme returns the expected standardized maximum of n normal samples
// plus Gumbel noise.
func (g *gen) extreme(n float64) float64 {
	if n < 2 {
		return 0
	}
	l := math.Log(n)
	a := math.Sqrt(2 * l)
	z := a - (math.Log(l)+math.Log(4*math.Pi))/(2*a)
	z += g.gumbel() / a
	return math.Max(z, 0.35+0.2*g.u())
}

// normal returns a tensor whose elements look like N(mean, std²).
func (g *gen) normal(shape []int, dt mw.DType, mean, std float64) *tensor {
	t := &tensor{Tensor: mw.Tensor{Shape: shape, DT: dt}, Std: math.Abs(std)}
	n := t.Numel()
	switch {
	case n <= 0:
		t.Empty = true
	case n == 1:
		t.Max, t.Min, t.Mean, t.Norm = mean, mean, mean, math.Abs(mean)
	default:
		std = math.Abs(std)
		t.Mean = mean + std/math.Sqrt(n)*g.n()
		t.Max = t.Mean + std*g.extreme(n)
		t.Min = t.Mean - std*g.extreme(n)
		t.Norm = math.Sqrt(n*(std*std+mean*mean)) * (1 + g.n()/math.Sqrt(8*n))
	}
	return t.fin()
}

// positive returns a tensor of non-negative values with the given mean and
// maximum; min is its smallest value.
func (g *gen) positive(shape []int, dt mw.DType, min, mean, max float64) *tensor {
	t := &tensor{Tensor: mw.Tensor{Shape: shape, DT: dt}}
	n := t.Numel()
	if n <= 0 {
		t.Empty = true
		return t
	}
	if n == 1 {
		t.Max, t.Min, t.Mean, t.Norm = mean, mean, mean, math.Abs(mean)
		return t.fin()
	}
	if max < mean {
		max = mean
	}
	if min > mean {
		min = mean
	}
	t.Max, t.Min, t.Mean = max, min, mean
	t.Std = (max - min) / 4
	t.Norm = math.Sqrt(n * (mean*mean + t.Std*t.Std))
	return t.fin()
}

// zeros returns a tensor of zeros.
func zeros(shape []int, dt mw.DType) *tensor {
	t := &tensor{Tensor: mw.Tensor{Shape: shape, DT: dt}, Zero: true, ZeroRow: true}
	if t.Numel() <= 0 {
		t.Empty = true
	}
	return t
}

// constant returns a tensor whose elements all equal v.
func constant(shape []int, dt mw.DType, v float64) *tensor {
	t := &tensor{Tensor: mw.Tensor{Shape: shape, DT: dt, Max: v, Min: v, Mean: v}}
	n := t.Numel()
	t.Norm = math.Abs(v) * math.Sqrt(n)
	if v == 0 {
		t.Zero, t.ZeroRow = true, true
	}
	if n <= 0 {
		t.Empty = true
	}
	return t.fin()
}

// scalar returns a 0-dim tensor.
func scalar(dt mw.DType, v float64) *tensor {
	return constant([]int{}, dt, v)
}

// ints returns an integer tensor with values in [lo, hi].
func ints(shape []int, lo, hi int64) *tensor {
	t := &tensor{Tensor: mw.Tensor{Shape: shape, DT: mw.DTInt64, Max: float64(hi), Min: float64(lo)}}
	if t.Numel() <= 0 {
		t.Empty = true
	}
	if len(shape) == 0 {
		t.Min = t.Max
	}
	return t
}

// bools returns a bool tensor; anyTrue and allTrue are its Max and Min.
func bools(shape []int, anyTrue, allTrue bool) *tensor {
	t := &tensor{Tensor: mw.Tensor{Shape: shape, DT: mw.DTBool}}
	if anyTrue {
		t.Max = 1
	}
	if allTrue {
		t.Min = 1
	}
	return t
}

// fin applies the dtype's range: finite statistics beyond the largest
// finite value mean the computation overflowed to Inf.
func (t *tensor) fin() *tensor {
	if !t.DT.IsFloat() || t.NaN || t.Empty {
		return t
	}
	lim := t.DT.MaxFinite()
	if t.Max > lim && !t.NoFinite {
		t.PInf, t.born = true, true
		t.Max = lim
	}
	if t.Min < -lim && !t.NoFinite {
		t.NInf, t.born = true, true
		t.Min = -lim
	}
	if t.Norm > 0 && !t.PInf && !t.NInf {
		// the finite-part norm may not exceed what the elements allow
		if m := math.Max(math.Abs(t.Max), math.Abs(t.Min)) * math.Sqrt(t.Numel()); t.Norm > m && m > 0 {
			t.Norm = m
		}
	}
	return t
}

// anyTainted reports whether one of the tensors has illegitimate
// non-finite values.
func anyTainted(ts ...*tensor) bool {
	for _, t := range ts {
		if t.tainted() {
			return true
		}
	}
	return false
}

// kindOf returns "nan" or "inf" for a non-finite tensor, "" otherwise.
func kindOf(ts ...*tensor) string {
	k := ""
	for _, t := range ts {
		if t == nil || !t.tainted() {
			continue
		}
		if t.NaN {
			return "nan"
		}
		k = "inf"
	}
	return k
}
