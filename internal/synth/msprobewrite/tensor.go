package msprobewrite

import "math"

// DType is a torch dtype as msprobe names it.
type DType uint8

const (
	DTFloat32 DType = iota
	DTBFloat16
	DTFloat16
	DTInt64
	DTBool
)

var dtypeNames = [...]string{"torch.float32", "torch.bfloat16", "torch.float16", "torch.int64", "torch.bool"}

func (d DType) String() string { return dtypeNames[d] }

// DTypeByName is the DType of a Spec.DType name.
func DTypeByName(s string) (DType, bool) {
	switch s {
	case "float32":
		return DTFloat32, true
	case "bfloat16":
		return DTBFloat16, true
	case "float16":
		return DTFloat16, true
	}
	return 0, false
}

func (d DType) IsFloat() bool { return d <= DTFloat16 }

// MaxFinite is the largest finite value of a floating dtype.
func (d DType) MaxFinite() float64 {
	switch d {
	case DTBFloat16:
		return 3.3895313892515355e+38
	case DTFloat16:
		return 65504
	}
	return math.MaxFloat32
}

// Round rounds x to the nearest value of the dtype (Round half to even), the
// way a statistic computed in that dtype comes out.
func (d DType) Round(x float64) float64 {
	switch d {
	case DTFloat32:
		return float64(float32(x))
	case DTBFloat16:
		return roundBF16(x)
	case DTFloat16:
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

// Tensor is a tensor as msprobe records it: its dtype and shape, the
// statistics of its finite elements and which non-finite values it holds.
// The simulation's tensors carry one (see TensorValue).
type Tensor struct {
	Shape []int
	DT    DType
	// Max, Min, Mean, Norm describe the finite elements (for integer and
	// bool tensors Max and Min hold the exact values).
	Max, Min, Mean, Norm float64
	// NaN, PInf, NInf: the tensor holds NaN, +Inf, -Inf elements.
	NaN, PInf, NInf bool
	// NoFinite: every element is non-finite (Torch.full(-inf)).
	NoFinite bool
	// Rows, when non-zero, confines the non-finite values to these rows of
	// the first dimension (at most 64 rows); zero means anywhere.
	Rows uint64
	// RG is requires_grad as msprobe records it.
	RG bool
	// Empty: numel is zero or the tensor has no data; all stats are null.
	Empty bool
}

// TensorValue is an argument written as a tensor: a *Tensor, or a value
// that carries one. Written returns nil for a tensor written as null.
type TensorValue interface {
	Written() *Tensor
}

// Written returns t.
func (t *Tensor) Written() *Tensor { return t }

// Numel is the number of elements of the shape.
func (t *Tensor) Numel() float64 {
	n := 1.0
	for _, d := range t.Shape {
		n *= float64(d)
	}
	return n
}

// Stats returns Max, Min, Mean, Norm as msprobe writes them for a floating
// tensor: NaN anywhere makes all four NaN, +Inf shows in Max (and Mean,
// Norm), -Inf in Min (and Mean, Norm), both make Mean NaN.
func (t *Tensor) Stats() (mx, mn, mean, norm float64) {
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
