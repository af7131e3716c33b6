package dump

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchFile is a real msprobe dump.json with NaN and Infinity in it.
func benchFile(b *testing.B) []byte {
	dir := sharedDir(b)
	data, err := os.ReadFile(filepath.Join(dir, "msprobe-generated/bwd-sqrt-zero-rank2-step5/mix/step5/rank2/dump.json"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkReader reads a real dump.json entry by entry (summary mode, what
// the scan uses, and details), reporting MB/s and allocations per file, with
// one reader reused from file to file as a trace's workers do; read=direct
// reads the tensors' statistics straight from the window (what the Reader
// does), read=tokens token by token.
func BenchmarkReader(b *testing.B) {
	data := benchFile(b)
	for _, mode := range []struct {
		name            string
		details, tokens bool // tokens: with the tensors' direct read off
	}{{"summary/read=direct", false, false}, {"details/read=direct", true, false}, {"summary/read=tokens", false, true}, {"details/read=tokens", true, true}} {
		details := mode.details
		b.Run(mode.name, func(b *testing.B) {
			defer func(off bool) { directOff = off }(directOff)
			directOff = mode.tokens
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			// one reader for every file, as each worker of a trace has
			opt := ReaderOptions{Details: details, WindowSize: 256 << 10}
			r := NewReader(nil, opt)
			for b.Loop() {
				r.Reuse(bytes.NewReader(data), opt)
				n := 0
				for r.Next() {
					n += len(r.Entry().Tensors)
				}
				if r.Err() != nil || n == 0 {
					b.Fatal(r.Err())
				}
			}
		})
	}
}

// BenchmarkPrefilter runs the byte search over a real clean dump.json
// (cleared) and over one with NaN in it (flagged).
func BenchmarkPrefilter(b *testing.B) {
	dir := sharedDir(b)
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
		off, err := LastEntry(bytes.NewReader(data), int64(len(data)), 1, func(name []byte) bool { return MayBeBackward(name) && ParseName(string(name)).IsBackward() })
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

// BenchmarkMeasure sizes one op's calls (what a plan asks) in a real
// dump.json: through the search for the op's names (MeasureFile, on every
// core) and through the reader (MeasureCalls).
func BenchmarkMeasure(b *testing.B) {
	data := benchFile(b)
	ops := []string{"Torch.sqrt"}
	b.Run("how=search", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if s, err := MeasureFile(bytes.NewReader(data), int64(len(data)), ops); err != nil || s["Torch.sqrt"].Calls == 0 {
				b.Fatal(s, err)
			}
		}
	})
	b.Run("how=reader", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if s, err := MeasureCalls(bytes.NewReader(data), ops); err != nil || s["Torch.sqrt"].Calls == 0 {
				b.Fatal(s, err)
			}
		}
	})
}
