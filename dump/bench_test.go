package dump

import (
	"bytes"
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
