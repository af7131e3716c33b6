package bytesearch

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
)

// However many hits come, and in whatever order within a window, every
// one lies in a span, the spans are ascending and disjoint, and there are
// never more than the Prefilter keeps.
func TestHitSpans(t *testing.T) {
	for _, keep := range []int{1, 2, 4, 64, 4096} {
		rng := rand.New(rand.NewPCG(uint64(keep), 7))
		p := NewPrefilter(0, keep, testSearch)
		p.hits.FirstSevere = -1
		var offs []int64
		base := int64(0)
		for w := 0; w < 200; w++ { // windows: hits ascending across them, shuffled within
			var win []int64
			for range rng.IntN(60) {
				win = append(win, base+rng.Int64N(1<<16))
			}
			rng.Shuffle(len(win), func(i, j int) { win[i], win[j] = win[j], win[i] })
			for _, o := range win {
				p.hit(o, rng.IntN(3) > 0)
			}
			offs = append(offs, win...)
			base += 1 << 16
		}
		h := &p.hits
		if len(h.Spans) > keep {
			t.Fatalf("max %d: %d spans", keep, len(h.Spans))
		}
		for i, s := range h.Spans {
			if s.From > s.To || (i > 0 && h.Spans[i-1].To >= s.From) {
				t.Fatalf("max %d: spans not ascending and disjoint at %d: %v", keep, i, h.Spans[max(0, i-1):i+1])
			}
		}
		for _, o := range offs {
			if !h.Within(o, o+1) {
				t.Fatalf("max %d: hit %d is in no span", keep, o)
			}
		}
		// the spans start and end at hits
		for _, s := range h.Spans {
			if !slices.Contains(offs, s.From) || !slices.Contains(offs, s.To) {
				t.Fatalf("max %d: span %v does not start and end at hits", keep, s)
			}
		}
		if keep >= 4096 && len(h.Spans) < len(offs)/2 {
			t.Errorf("max %d: %d hits merged into %d spans, with room for all", keep, len(offs), len(h.Spans))
		}
	}
}

// lastNewline and lastLine agree with the bytes package on every length
// and position, for entry lines of every indentation (jsonlex's tests hold
// its vector line search to its plain Go one).
func TestLastLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for indent := 1; indent <= 4; indent++ {
		line := EntryLine(nil, indent, '"')
		alphabet := []byte("\n \"a\x80\xff" + string(line))
		for n := range 300 {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			for end := 0; end <= n; end++ {
				if got, want := lastNewline(b[:end]), bytes.LastIndexByte(b[:end], '\n'); got != want {
					t.Fatalf("lastNewline(%q) = %d, want %d", b[:end], got, want)
				}
				if got, want := lastLine(b[:end], line), bytes.LastIndex(b[:end], line); got != want {
					t.Fatalf("lastLine(%q, %q) = %d, want %d", b[:end], line, got, want)
				}
			}
		}
	}
}

// MayBeBackward holds for every name ParseName reads as backward.
func TestMayBeBackward(t *testing.T) {
	segs := []string{"Torch", "Tensor", "Module", "Cell", "Distributed", "Functional", "backward", "forward",
		"parameters_grad", "0", "1", "12", "all_reduce_0_1", "linear_3_0", "x_1", "layer", "Linear", "", "back", "ward"}
	rng := rand.New(rand.NewPCG(5, 5))
	backward := 0
	for range 100000 {
		name := segs[rng.IntN(len(segs))]
		for range rng.IntN(5) {
			name += "." + segs[rng.IntN(len(segs))]
		}
		if dump.ParseName(name).IsBackward() {
			backward++
			if !MayBeBackward([]byte(name)) {
				t.Fatalf("%q is backward, MayBeBackward says it cannot be", name)
			}
		}
	}
	if backward < 1000 {
		t.Fatalf("only %d backward names drawn", backward)
	}
	for _, n := range []string{"Torch.sqrt.0.forward", "Module.layer.Linear.forward.0", "Distributed.all_reduce_0_0"} {
		if MayBeBackward([]byte(n)) {
			t.Errorf("MayBeBackward(%q): true for a forward name", n)
		}
	}
}

// FuzzLastLine: on any bytes, the entry line search (the vector path where
// the CPU has it) finds what bytes.LastIndex finds, for every indentation.
func FuzzLastLine(f *testing.F) {
	f.Add([]byte("{\n \"data\": {\n  \"a.0.forward\": {\n   \"x\": 1\n  }"), uint8(1))
	f.Add(bytes.Repeat([]byte("\n    \"k\": 1,"), 12), uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, indent uint8) {
		line := EntryLine(nil, 1+int(indent%4), '"')
		if got, want := lastLine(b, line), bytes.LastIndex(b, line); got != want {
			t.Fatalf("lastLine(%q, %q) = %d, want %d", b, line, got, want)
		}
	})
}
