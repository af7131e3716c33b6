package bytesearch

import (
	"math/rand/v2"
	"testing"
)

// The vector needle search says what the plain search says, on any bytes.
func FuzzBackwardNeedle(f *testing.F) {
	f.Add([]byte(`{"data": {"Torch.sqrt.0.backward": {}}}`))
	f.Add([]byte(`"Module.fc.Linear.parameters_grad": {`))
	f.Add([]byte(`"Torch.sqrt_0_1": [`))
	f.Add([]byte(`bbbbbbbbddddddddmmmmmmmmmmm__11""`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkNeedles(t, data)
	})
}

func checkNeedles(t *testing.T, data []byte) {
	t.Helper()
	want := hasNeedleScalar(data)
	eachNeedleKernel(func(kernel string) {
		if got := hasBackwardNeedle(data, true); got != want {
			t.Fatalf("vector search (%s) %v, plain %v, on %q", kernel, got, want, data)
		}
	})
	if got := hasBackwardNeedle(data, false); got != want {
		t.Fatalf("scalar path %v, plain %v", got, want)
	}
}

// Needles and their near misses at every place around block edges, in
// bytes made of their letters.
func TestBackwardNeedleRandom(t *testing.T) {
	if !haveNeedleMasks {
		t.Log("no vector needle search on this CPU: the plain search is compared with itself")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	letters := []byte("backwardmeters_grad_1\" \n")
	pieces := [][]byte{[]byte("backward"), []byte("meters_grad"), []byte(`_1"`), []byte("backwarx"), []byte("meters_grax"), []byte(`_1'`), []byte("bxxxxxxd")}
	found := 0
	for n := range 20000 {
		b := make([]byte, rng.IntN(200))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		if len(b) > 12 && n%2 == 0 {
			p := pieces[rng.IntN(len(pieces))]
			at := rng.IntN(len(b) - len(p) + 1)
			copy(b[at:], p)
		}
		if hasNeedleScalar(b) {
			found++
		}
		checkNeedles(t, b)
	}
	if found == 0 {
		t.Fatal("no input held a needle")
	}
}
