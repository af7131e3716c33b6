package callsize

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestWindowedReaderAtLikeSource holds the window's reads to the source's
// own: the same bytes, counts and end-of-file, at random offsets and
// lengths, across the window's edges and the source's end.
func TestWindowedReaderAtLikeSource(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 10_000)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	want := bytes.NewReader(src)
	for _, window := range []int{1, 7, 64, 4096, 20_000} {
		w := newWindowedReaderAt(bytes.NewReader(src), int64(len(src)), window)
		for range 2000 {
			off := rng.Int64N(int64(len(src)) + 50)
			n := rng.IntN(300)
			if rng.IntN(10) == 0 {
				n = rng.IntN(window + 10)
			}
			got, wantBuf := make([]byte, n), make([]byte, n)
			gn, gerr := w.ReadAt(got, off)
			wn, werr := want.ReadAt(wantBuf, off)
			if gn != wn || (gerr == nil) != (werr == nil) || !bytes.Equal(got[:gn], wantBuf[:wn]) {
				t.Fatalf("window %d, ReadAt(%d bytes, %d): got %d, %v; want %d, %v", window, n, off, gn, gerr, wn, werr)
			}
		}
	}
}

// TestIndexByAnchorLikeIndex holds the search by an op's rarest byte to
// bytes.Index, whichever byte of the op is the anchor.
func TestIndexByAnchorLikeIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("Toech.xp\n \"a")
	for range 3000 {
		b := make([]byte, rng.IntN(200))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		op := string(alphabet[rng.IntN(len(alphabet))]) + string(alphabet[rng.IntN(len(alphabet))])
		if rng.IntN(2) == 0 {
			op = "Torch.exp"[:1+rng.IntN(9)]
		}
		for anchor := range len(op) {
			if got, want := indexByAnchor(b, op, anchor), bytes.Index(b, []byte(op)); got != want {
				t.Fatalf("indexByAnchor(%q, %q, %d) = %d, want %d", b, op, anchor, got, want)
			}
		}
	}
}
