package bytesearch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/fixturedir"
)

// BenchmarkPrefilter runs the byte search over a real clean dump.json
// (cleared) and over one with NaN in it (flagged).
func BenchmarkPrefilter(b *testing.B) {
	dir := fixturedir.Dir(b)
	for _, name := range []string{"step4", "step5"} {
		data, err := os.ReadFile(filepath.Join(dir, "msprobe-generated/bwd-sqrt-zero-rank2-step5/mix", name, "rank2/dump.json"))
		if err != nil {
			b.Fatal(err)
		}
		for _, vector := range []bool{true, false} {
			search := "vector"
			if !vector {
				search = "scalar"
			}
			b.Run("file="+name+"/search="+search, func(b *testing.B) {
				if vector && !haveAnchorMasks {
					b.Skip("no vector search on this CPU")
				}
				p := NewPrefilter(len(data)+1, 4096, testSearch)
				p.vector = vector
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
}

// BenchmarkLastEntry looks for a backward entry in a forward-only
// document of 8 MB, which it reads whole, from the end.
func BenchmarkLastEntry(b *testing.B) {
	data := forwardOnlyDoc()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		off, err := LastEntry(bytes.NewReader(data), int64(len(data)), 1, func(name []byte) bool { return MayBeBackward(name) && dump.ParseName(string(name)).IsBackward() })
		if err != nil || off != -1 {
			b.Fatal(off, err)
		}
	}
}

// BenchmarkBackwardNeedle is the byte search's look for a backward name in
// the same document, which holds none: what saves LastEntry its read.
func BenchmarkBackwardNeedle(b *testing.B) {
	data := forwardOnlyDoc()
	for _, vector := range []bool{true, false} {
		name := "search=vector"
		if !vector {
			name = "search=scalar"
		}
		b.Run(name, func(b *testing.B) {
			if vector && !haveNeedleMasks {
				b.Skip("no vector needle search on this CPU")
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if hasBackwardNeedle(data, vector) {
					b.Fatal("a needle in a forward-only document")
				}
			}
		})
	}
}

// forwardOnlyDoc is a forward-only document of 8 MB with a -inf in every
// call.
func forwardOnlyDoc() []byte {
	entry := `
  "Functional.linear.%d.forward": {
   "input_args": [
    {
     "type": "torch.Tensor",
     "dtype": "torch.float32",
     "shape": [
      1,
      4096
     ],
     "Max": 3.25,
     "Min": -inf,
     "Mean": 0.01,
     "Norm": 12.5,
     "requires_grad": true
    }
   ]
  },`
	var doc bytes.Buffer
	doc.WriteString("{\n \"task\": \"statistics\",\n \"data\": {")
	for i := 0; doc.Len() < 8<<20; i++ {
		fmt.Fprintf(&doc, entry, i)
	}
	doc.WriteString("\n }\n}\n")
	return doc.Bytes()
}

// benchFile is a real msprobe dump.json with NaN and Infinity in it.
func benchFile(b *testing.B) []byte {
	data, err := os.ReadFile(filepath.Join(fixturedir.Dir(b), "msprobe-generated/bwd-sqrt-zero-rank2-step5/mix/step5/rank2/dump.json"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkFindAheadReal runs the search for values heading for overflow
// over the same real dump.json files (200 kB, in the CPU's caches).
func BenchmarkFindAheadReal(b *testing.B) {
	dir := fixturedir.Dir(b)
	for _, name := range []string{"step4", "step5"} {
		data, err := os.ReadFile(filepath.Join(dir, "msprobe-generated/bwd-sqrt-zero-rank2-step5/mix", name, "rank2/dump.json"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("file="+name, func(b *testing.B) {
			var f AheadFinds
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				f.Numbers, f.Names = f.Numbers[:0], f.Names[:0]
				FindAhead(data, testAheadRules, &f)
			}
		})
	}
}
