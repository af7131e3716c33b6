//go:build amd64

package bytesearch

import (
	"bytes"
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

// The AVX-512 searches (compares, and VBMI table look-ups) give the AVX2
// search's masks, bit for bit, on random runs of blocks (odd counts
// included) of the bytes that matter, of the bytes of 0x80 or more whose
// low seven bits are one of them (VPERMI2B reads only those), and of any
// byte.
func TestAnchorMasksAVX512LikeAVX2(t *testing.T) {
	kernels := map[string]func([]byte, int, int, []uint64) int{}
	if haveAVX512 {
		kernels["avx512"] = anchorMasks512
	}
	if haveVBMI {
		kernels["vbmi"] = anchorMasksTable
	}
	if len(kernels) == 0 {
		t.Skip("no AVX-512BW on this CPU")
	}
	for name, kernel := range kernels {
		rng := rand.New(rand.NewSource(3))
		ascii := []byte(`NaIinfyFYeE0123456789"\\ :,{}[]+-.ux`)
		mixed := slices.Clone(ascii)
		for _, c := range ascii {
			mixed = append(mixed, c|0x80)
		}
		b := make([]byte, 2+32*9+2)
		want, got := make([]uint64, 9), make([]uint64, 9)
		for i := 0; i < 60000; i++ {
			for j := range b {
				switch i % 3 {
				case 0:
					b[j] = ascii[rng.Intn(len(ascii))]
				case 1:
					b[j] = mixed[rng.Intn(len(mixed))]
				default:
					b[j] = byte(rng.Intn(256))
				}
			}
			blocks := rng.Intn(10)
			n := anchorMasks256(b, 2, blocks, want)
			if m := kernel(b, 2, blocks, got); m != n || !reflect.DeepEqual(got[:m], want[:n]) {
				t.Fatalf("%s: %d blocks of %q: %x, AVX2 %x", name, blocks, b, got[:m], want[:n])
			}
		}
	}
}

// Each row of the VBMI kernel's table says what plausible says: for every
// byte in each of the five places around every anchor (the other four
// places holding a byte that meets every condition there), the conditions
// the byte meets there decide plausible's answer.
func TestAnchorTableIsPlausible(t *testing.T) {
	for _, anchor := range anchors {
		for place := range 5 {
			for c := range 256 {
				// five bytes, the anchor in the middle; every other place
				// holds a byte that lets the rule of the anchor through
				b := []byte{'n', 'a', anchor, '"', 'x'}
				switch anchor {
				case 'N':
					b[3] = 'a'
				case 'I':
					b[3] = 'n'
				case 'e', 'E':
					b[1] = '7'
				}
				if place == 2 {
					continue
				}
				b[place] = byte(c)
				got := tableAccepts(b)
				if want := plausible(b, 2); got != want {
					t.Fatalf("%q (byte %#x in place %d): the table says %v, plausible %v", b, c, place, got, want)
				}
			}
		}
	}
}

// tableAccepts is what anchorMasksVBMI computes for b[2], in Go.
func tableAccepts(b []byte) bool {
	row := func(r *[128]byte, place int, c byte) byte {
		if c >= 0x80 {
			return anchorTables.high[place]
		}
		return r[c]
	}
	t := anchorTables
	return row(&t.self, 0, b[2])&row(&t.after, 1, b[3])&row(&t.before, 2, b[1])&row(&t.before2, 3, b[0])&row(&t.after2, 4, b[4]) != 0
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
	if haveVBMI {
		kernels["vbmi"] = anchorMasksTable
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
	}{{"avx2", anchorMasks256}, {"avx512", anchorMasks512}, {"vbmi", anchorMasksTable}}
	for _, k := range kernels {
		b.Run("kernel="+k.name, func(b *testing.B) {
			if k.name == "avx512" && !haveAVX512 || k.name == "vbmi" && !haveVBMI || !haveAnchorMasks {
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
