package synth

import (
	"math"
	"math/rand/v2"
)

// DType is a torch DType as msprobe names it.
type DType uint8

const (
	dtF32 DType = iota
	dtBF16
	dtF16
	dtI64
	dtBool
)

var dtypeNames = [...]string{"torch.float32", "torch.bfloat16", "torch.float16", "torch.int64", "torch.bool"}

func (d DType) String() string { return dtypeNames[d] }

func dtypeByName(s string) (DType, bool) {
	switch s {
	case "float32":
		return dtF32, true
	case "bfloat16":
		return dtBF16, true
	case "float16":
		return dtF16, true
	}
	return 0, false
}

func (d DType) IsFloat() bool { return d <= dtF16 }

// MaxFinite is the largest finite value of a floating dtype.
func (d DType) MaxFinite() float64 {
	switch d {
	case dtBF16:
		return 3.3895313892515355e+38
	case dtF16:
		return 65504
	}
	return math.MaxFloat32
}

// Round rounds x to the nearest value of the dtype (Round half to even), the
// way a statistic computed in that dtype comes out.
func (d DType) Round(x float64) float64 {
	switch d {
	case dtF32:
		return float64(float32(x))
	case dtBF16:
		return roundBF16(x)
	case dtF16:
		return roundF16(x)
	}
	return x
}

func roundBF16(x float64) float64 {
	f := float32(x)
	if f != f || math.IsInf(float64(f), 0) {
		return float64(f)
	}
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1
	return float64(math.Float32frombits(b & 0xffff0000))
}

func roundF16(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	a := math.Abs(x)
	if a >= 65520 {
		return math.Copysign(math.Inf(1), x)
	}
	const sub = 5.960464477539063e-08 // 2^-24
	if a < 6.103515625e-05 {
		return math.RoundToEven(x/sub) * sub
	}
	_, e := math.Frexp(a)
	step := math.Ldexp(1, e-11)
	return math.RoundToEven(x/step) * step
}

// tensor is an abstract tensor: its shape and dtype, the statistics of its
// finite elements, and which non-finite values it holds.
type tensor struct {
	Shape []int
	DT    DType
	// Max, Min, Mean, Norm describe the finite elements (for integer and
	// bool tensors Max and Min hold the exact values). Std is the spread
	// the rules derive new tensors from.
	Max, Min, Mean, Norm, Std float64
	// NaN, PInf, NInf: the tensor holds NaN, +Inf, -Inf elements.
	NaN, PInf, NInf bool
	// NoFinite: every element is non-finite (Torch.full(-inf)).
	NoFinite bool
	// Zero: some elements are exactly zero. ZeroRow: some whole rows of
	// the last dimension are zero. FullRow: some rows of the last
	// dimension are entirely masked (-inf, or true in a mask).
	Zero, ZeroRow, FullRow bool
	// Spike: the extreme value sits at the same element on every rank
	// (so a sum over ranks adds the extremes).
	Spike bool
	// Rows, when non-zero, confines the non-finite values to these rows of
	// the first dimension (at most 64 rows); zero means anywhere.
	Rows uint64
	// Legit: the non-finite values are legitimate (masks, garbage in
	// buffers about to be overwritten).
	Legit bool
	// RG is requires_grad as msprobe records it.
	RG bool
	// Empty: numel is zero or the tensor has no data; all stats are null.
	Empty bool

	born  bool // this op created new non-finite values
	node  *node
	param *param
}

func (t *tensor) nonFinite() bool { return t.NaN || t.PInf || t.NInf }

// allZero reports a tensor whose every element is exactly zero.
func (t *tensor) allZero() bool {
	return t != nil && !t.Empty && !t.nonFinite() && t.Max == 0 && t.Min == 0
}

// tainted reports non-finite values that are not legitimate.
func (t *tensor) tainted() bool { return t != nil && t.nonFinite() && !t.Legit }

func (t *tensor) Numel() float64 {
	n := 1.0
	for _, d := range t.Shape {
		n *= float64(d)
	}
	return n
}

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
func (g *gen) normal(shape []int, dt DType, mean, std float64) *tensor {
	t := &tensor{Shape: shape, DT: dt, Std: math.Abs(std)}
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
func (g *gen) positive(shape []int, dt DType, min, mean, max float64) *tensor {
	t := &tensor{Shape: shape, DT: dt}
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
func zeros(shape []int, dt DType) *tensor {
	t := &tensor{Shape: shape, DT: dt, Zero: true, ZeroRow: true}
	if t.Numel() <= 0 {
		t.Empty = true
	}
	return t
}

// constant returns a tensor whose elements all equal v.
func constant(shape []int, dt DType, v float64) *tensor {
	t := &tensor{Shape: shape, DT: dt, Max: v, Min: v, Mean: v}
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
func scalar(dt DType, v float64) *tensor {
	return constant([]int{}, dt, v)
}

// ints returns an integer tensor with values in [lo, hi].
func ints(shape []int, lo, hi int64) *tensor {
	t := &tensor{Shape: shape, DT: dtI64, Max: float64(hi), Min: float64(lo)}
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
	t := &tensor{Shape: shape, DT: dtBool}
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

// Stats returns Max, Min, Mean, Norm as msprobe writes them for a floating
// tensor: NaN anywhere makes all four NaN, +Inf shows in Max (and Mean,
// Norm), -Inf in Min (and Mean, Norm), both make Mean NaN.
func (t *tensor) Stats() (mx, mn, mean, norm float64) {
	nan, inf := math.NaN(), math.Inf(1)
	if t.NaN {
		return nan, nan, nan, nan
	}
	mx, mn, mean, norm = t.Max, t.Min, t.Mean, t.Norm
	if t.NoFinite {
		switch {
		case t.PInf && t.NInf:
			return inf, -inf, nan, inf
		case t.PInf:
			return inf, inf, inf, inf
		case t.NInf:
			return -inf, -inf, -inf, inf
		}
	}
	if t.PInf {
		mx, mean, norm = inf, inf, inf
	}
	if t.NInf {
		mn, norm = -inf, inf
		if t.PInf {
			mean = nan
		} else {
			mean = -inf
		}
	}
	d := t.DT
	return d.Round(mx), d.Round(mn), d.Round(mean), d.Round(norm)
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
