//go:build amd64

package dump

import (
	"bytes"
	"math/rand"
	"reflect"
	"testing"
)

// The AVX-512 search gives the AVX2 search's masks, bit for bit, on random
// runs of blocks (odd counts included) of the bytes that matter and of any
// byte.
func TestAnchorMasksAVX512LikeAVX2(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512BW on this CPU")
	}
	rng := rand.New(rand.NewSource(3))
	alphabet := []byte(`NaIinfyFYeE0123456789"\\ :,{}[]+-.ux`)
	b := make([]byte, 2+32*9+2)
	want, got := make([]uint64, 9), make([]uint64, 9)
	for i := 0; i < 30000; i++ {
		for j := range b {
			if i%2 == 0 {
				b[j] = alphabet[rng.Intn(len(alphabet))]
			} else {
				b[j] = byte(rng.Intn(256))
			}
		}
		blocks := rng.Intn(10)
		n := anchorMasks256(b, 2, blocks, want)
		if m := anchorMasks512(b, 2, blocks, got); m != n || !reflect.DeepEqual(got[:m], want[:n]) {
			t.Fatalf("%d blocks of %q: AVX-512 %x, AVX2 %x", blocks, b, got[:m], want[:n])
		}
	}
}

// Each vector search the CPU has finds what the byte-by-byte search finds,
// on the inputs of the tests above (the CPU's best is what they run).
func TestAnchorMasksEachKernel(t *testing.T) {
	if !haveAnchorMasks {
		t.Skip("no vector search on this CPU")
	}
	kernels := map[string]func([]byte, int, int, []uint64) int{"avx2": anchorMasks256}
	if haveAVX512 {
		kernels["avx512"] = anchorMasks512
	}
	defer func() { vectorKernel = anchorMasks }()
	for name, k := range kernels {
		vectorKernel = k
		t.Run(name, func(t *testing.T) {
			TestAnchorMasksEveryPosition(t)
			TestAnchorMasksRandom(t)
		})
	}
}

// BenchmarkPrefilterKernel runs the byte search over a real dump.json
// (the one with NaN) with each vector kernel the CPU has.
func BenchmarkPrefilterKernel(b *testing.B) {
	data := benchFile(b)
	kernels := []struct {
		name string
		k    func([]byte, int, int, []uint64) int
	}{{"avx2", anchorMasks256}, {"avx512", anchorMasks512}}
	for _, k := range kernels {
		b.Run("kernel="+k.name, func(b *testing.B) {
			if k.name == "avx512" && !haveAVX512 || !haveAnchorMasks {
				b.Skip("not on this CPU")
			}
			p := NewPrefilter(len(data)+1, 4096, testSearch)
			p.kernel = k.k
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Scan(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// eachNeedleKernel runs f with each vector needle search the CPU has.
func eachNeedleKernel(f func(kernel string)) {
	defer func(was bool) { needle512 = was }(needle512)
	needle512 = false
	f("avx2")
	if haveAVX512 {
		needle512 = true
		f("avx512")
	}
}

// BenchmarkNeedleKernel runs the vector needle search over a forward-only
// document with each kernel the CPU has.
func BenchmarkNeedleKernel(b *testing.B) {
	data := forwardOnlyDoc()
	eachNeedleKernel(func(kernel string) {
		b.Run("kernel="+kernel, func(b *testing.B) {
			if !haveNeedleMasks {
				b.Skip("no vector needle search on this CPU")
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if hasBackwardNeedle(data, true) {
					b.Fatal("a needle in a forward-only document")
				}
			}
		})
	})
}
