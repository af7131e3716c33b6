package msprobewrite

import "math"

// A tensor's JSON depends only on its dtype, shape, the four statistics as
// written, requires_grad and its depth in the document. The same content
// comes back again and again: an op's output is the next op's input, a
// weight is an input of every micro-batch, a gradient is the output of one
// backward entry and the input of the next. tensorCache keeps the rendered
// text of recent tensors, keyed by that content (never by identity, so a
// tensor changed after it was written cannot be served stale, and nothing
// is shared between ranks).

// maxCachedDims is the rank of the largest shape the cache keys.
const maxCachedDims = 6

// tensorKey is everything the JSON of a tensor depends on.
type tensorKey struct {
	stats [4]uint64 // bits of Max, Min, Mean, Norm as written (or raw for int and bool)
	shape [maxCachedDims]int64
	ndim  int8
	dt    DType
	empty bool
	rg    bool
	depth int32
}

type cacheSlot struct {
	key  tensorKey
	used bool
	text []byte
}

type tensorCache struct {
	slots []cacheSlot
}

// keyOf returns the cache key of t written at depth d, and false when the
// tensor is not cacheable.
func keyOf(t *Tensor, d int) (tensorKey, bool) {
	var k tensorKey
	if len(t.Shape) > maxCachedDims {
		return k, false
	}
	k.ndim = int8(len(t.Shape))
	for i, n := range t.Shape {
		k.shape[i] = int64(n)
	}
	k.dt, k.empty, k.rg, k.depth = t.DT, t.Empty, t.RG, int32(d)
	switch {
	case t.Empty:
	case t.DT == DTBool || t.DT == DTInt64:
		k.stats[0], k.stats[1] = math.Float64bits(t.Max), math.Float64bits(t.Min)
	default:
		mx, mn, mean, norm := t.Stats()
		k.stats = [4]uint64{math.Float64bits(mx), math.Float64bits(mn), math.Float64bits(mean), math.Float64bits(norm)}
	}
	return k, true
}

// mix64 is the SplitMix64 finalizer.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// slot returns the key's slot among n (a power of two).
func (k *tensorKey) slot(n int) int {
	h := k.stats[0] ^ k.stats[1]*0x9e3779b97f4a7c15 ^ k.stats[2]*0xbf58476d1ce4e5b9 ^ k.stats[3]*0x94d049bb133111eb
	for i := int8(0); i < k.ndim; i++ {
		h = (h ^ uint64(k.shape[i])) * 0x100000001b3
	}
	h ^= uint64(k.depth)<<8 | uint64(k.dt)<<4
	if k.rg {
		h ^= 1 << 2
	}
	if k.empty {
		h ^= 1 << 3
	}
	return int(mix64(h) & uint64(n-1))
}

// cachedTensor writes t at depth d, from the cache when the same content
// was written recently.
func (j *jsonOut) cachedTensor(d int, t *Tensor) {
	k, ok := keyOf(t, d)
	if !ok {
		j.tensorText(d, t)
		return
	}
	if j.cache.slots == nil {
		j.cache.slots = make([]cacheSlot, j.o.cacheSlots)
	}
	s := &j.cache.slots[k.slot(len(j.cache.slots))]
	if s.used && s.key == k {
		j.b = append(j.b, s.text...)
		return
	}
	start := len(j.b)
	j.tensorText(d, t)
	s.key, s.used = k, true
	s.text = append(s.text[:0], j.b[start:]...)
}
