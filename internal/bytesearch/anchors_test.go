package bytesearch

import (
	"bytes"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// vectorKernel is the vector search checkVector holds to the scalar one:
// the CPU's best, or one of the others (anchors_amd64_test.go).
var vectorKernel = anchorMasks

// scanBoth runs the byte search with and without the vector search over
// data, through windows of the given size and at most max hits.
func scanBoth(t *testing.T, data []byte, window, max int) (vector, scalar Hits) {
	t.Helper()
	for i, vec := range []bool{true, false} {
		p := NewPrefilter(window, max, testSearch)
		p.vector, p.kernel = vec, vectorKernel
		h, err := p.Scan(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		c := *h
		c.Spans = append([]Span(nil), h.Spans...)
		c.ForwardOps = map[string]int{}
		for k, v := range h.ForwardOps {
			c.ForwardOps[k] = v
		}
		if i == 0 {
			vector = c
		} else {
			scalar = c
		}
	}
	return vector, scalar
}

func checkVector(t *testing.T, data []byte) {
	t.Helper()
	if !haveAnchorMasks {
		t.Skip("no vector search on this CPU: the scalar search is the only one")
	}
	for _, w := range []int{7, 33, 256, 4096} {
		for _, max := range []int{3, 4096} {
			v, s := scanBoth(t, data, w, max)
			if !reflect.DeepEqual(v, s) {
				t.Fatalf("window %d, max %d: vector search %+v, scalar search %+v\ninput %q", w, max, v, s, data)
			}
		}
	}
}

// Every anchor at every position around the 32-byte blocks: the vector
// search finds what the byte-by-byte search finds.
func TestAnchorMasksEveryPosition(t *testing.T) {
	pieces := []string{`NaN`, `"NAN"`, `Infinity`, `-Infinity`, `"inf"`, `"-INFINITY"`, `"\u006ean"`, `1e300`, `2E+400`,
		`"Min"`, `"is_nan"`, `"y"`, `"F"`, `x\\`, `0x7f5e11e79330`, `e1`, `"Nan"`,
		`"Min": 1`, `"is_nan": 1`, `"nan": 2`, `"Inf": 3`, `"an": 4`, `1e-400`, `2E-06`}
	for _, piece := range pieces {
		for pos := 0; pos < 70; pos++ {
			doc := []byte(`{"data": {"a.b.0.forward": {"output": [{"Max": 1, "Min": 0, "x": ` + strings.Repeat(" ", pos) + piece + `}]}}}` + "\n")
			checkVector(t, doc)
		}
	}
}

// Randomized documents built of the bytes that matter.
func TestAnchorMasksRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte(`NaIinfyFYeE0123456789"\\ :,{}[]+-.ux`)
	for i := 0; i < 2000; i++ {
		b := make([]byte, 1+rng.Intn(300))
		for j := range b {
			b[j] = alphabet[rng.Intn(len(alphabet))]
		}
		checkVector(t, append([]byte("{"), b...))
	}
}

// FuzzAnchorMasks: on any input, the vector search and the scalar search
// give the same hits, every field.
func FuzzAnchorMasks(f *testing.F) {
	f.Add([]byte(`{"data": {"a.b.0.forward": {"output": [{"Max": NaN, "Min": "-INF", "Mean": 1e300}]}}}`))
	f.Add([]byte(`{"a": "Infinity", "b": "nAn", "c": 5E+300, "d": "\u0069nf"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkVector(t, data)
	})
}

// The kernel's masks, bit for bit, on random runs of blocks: a bit is set
// exactly where a byte is an anchor that plausible accepts, and blocks
// without one are left out.
func TestAnchorMasksArePlausible(t *testing.T) {
	if !haveAnchorMasks {
		t.Skip("no vector search on this CPU: the scalar search is the only one")
	}
	rng := rand.New(rand.NewSource(7))
	alphabet := []byte(`NaIinfyFYeE0123456789"\\ :,{}[]+-.ux` + "\n")
	out := make([]uint64, 64)
	for i := 0; i < 3000; i++ {
		blocks := 1 + rng.Intn(9)
		b := make([]byte, 2+32*blocks+2)
		for j := range b {
			b[j] = alphabet[rng.Intn(len(alphabet))]
		}
		var want []uint64
		for j := 0; j < blocks; j++ {
			var m uint64
			for k := 0; k < 32; k++ {
				if at := 2 + 32*j + k; isAnchor[b[at]] && plausible(b, at) {
					m |= 1 << k
				}
			}
			if m != 0 {
				want = append(want, uint64(j)<<32|m)
			}
		}
		n := anchorMasks(b, 2, blocks, out)
		if !slices.Equal(out[:n], want) {
			t.Fatalf("blocks of %q: masks %x, want %x", b, out[:n], want)
		}
	}
}
