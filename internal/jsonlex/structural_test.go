package jsonlex

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// classifyBytes is the definition of blockMasks, one byte at a time.
func classifyBytes(b []byte) []blockMasks {
	m := make([]blockMasks, len(b)/64)
	for i, c := range b[:64*len(m)] {
		bit := uint64(1) << (i % 64)
		p := &m[i/64]
		switch c {
		case '"':
			p.quote |= bit
		case '\\':
			p.backslash |= bit
		case '{', '[':
			p.open |= bit
		case '}', ']':
			p.close |= bit
		}
	}
	return m
}

func checkClassify(t *testing.T, b []byte) {
	b = b[:len(b)/64*64]
	want := classifyBytes(b)
	got := make([]blockMasks, len(want))
	classifyGeneric(b, got)
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("generic: block %d: %+v, want %+v", j, got[j], want[j])
		}
	}
	if len(want) == 0 {
		return
	}
	clear(got)
	classify(b, got)
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("classify (vector %v): block %d: %+v, want %+v", haveClassifyVector, j, got[j], want[j])
		}
	}
}

// FuzzClassify: the vector and the plain Go classify agree with the
// definition on every input.
func FuzzClassify(f *testing.F) {
	f.Add(bytes.Repeat([]byte(`{"a": [1, "x\"]"], "b\\": {}}`), 5))
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	f.Add(all)
	f.Fuzz(checkClassify)
}

func TestClassifyEveryByte(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 64*40)
	for i := range b {
		b[i] = byte(i) // every byte value in every lane
	}
	checkClassify(t, b)
	for range 200 {
		for i := range b {
			const set = "\"\\{}[]a \x00\xff{"
			b[i] = set[r.IntN(len(set))]
		}
		checkClassify(t, b)
	}
}

func TestPrefixXor(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		q := r.Uint64() & r.Uint64()
		var want, par uint64
		for i := range 64 {
			par ^= q >> i & 1
			want |= par << i
		}
		if got := prefixXor(q); got != want {
			t.Fatalf("prefixXor(%#x) = %#x, want %#x", q, got, want)
		}
	}
}

// skipRef is SkipValueFast's rule written plainly over the whole input:
// from the opening bracket at in[at], the offset just past the bracket that
// closes it, counting brackets outside strings, where a backslash escapes
// the next byte; -1 when the input ends first.
func skipRef(in []byte, at int) int {
	depth, inString, escaped := 0, false, false
	for i := at; i < len(in); i++ {
		c := in[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// checkSkipRef: on any input, SkipValueFast at the k-th token ends where
// skipRef does, or fails with a truncation exactly where skipRef runs out,
// with the structural index and without it.
func checkSkipRef(t *testing.T, in []byte, k uint16) {
	checkSkipRefWith(t, in, k)
	defer setClassifyVector(setClassifyVector(false))
	checkSkipRefWith(t, in, k)
}

func checkSkipRefWith(t *testing.T, in []byte, k uint16) {
	ws := []int{1, 3, 64, 65, 200, 4096}[int(k>>8)%6]
	l := New(bytes.NewReader(in), Options{WindowSize: ws})
	for i := 0; i < int(k)%16; i++ {
		if _, err := l.Next(); err != nil {
			return
		}
	}
	// Peek at the next token with a second lexer, to know where it starts.
	p := New(bytes.NewReader(in), Options{WindowSize: ws})
	for i := 0; i < int(k)%16; i++ {
		p.Next()
	}
	tok, err := p.Next()
	if err != nil || (tok.Kind != ObjectStart && tok.Kind != ArrayStart) {
		return
	}
	want := skipRef(in, int(tok.Offset))
	err = l.SkipValueFast()
	switch {
	case want < 0:
		se, ok := err.(*SyntaxError)
		if !ok || !se.Truncated || se.Offset != int64(len(in)) {
			t.Fatalf("token %d at %d: the value does not close, SkipValueFast says %v", int(k)%16, tok.Offset, err)
		}
	case err != nil:
		t.Fatalf("token %d at %d: SkipValueFast: %v, want the end at %d", int(k)%16, tok.Offset, err, want)
	case l.InputOffset() != int64(want):
		t.Fatalf("token %d at %d (window %d, index %v): SkipValueFast ends at %d, want %d", int(k)%16, tok.Offset, ws, haveClassifyVector, l.InputOffset(), want)
	}
}

// FuzzSkipIndexed: the structural walk against its plain rule, on every
// input (valid JSON or not) and window size.
func FuzzSkipIndexed(f *testing.F) {
	for i, s := range append(fuzzSeeds, windowDocs...) {
		f.Add([]byte(s), uint16(i*7))
	}
	f.Add([]byte(`[{"a": ["x\\\\\"y", {"b": "\\\\"}], "c": 1}]`), uint16(0x101))
	f.Add([]byte(`[`+strings.Repeat(`"\\\\\\\"[{", `, 30)+`1]`), uint16(0x200))
	f.Fuzz(checkSkipRef)
}

func TestSkipIndexedRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := `{}[]""\\\ a1,:`
	for n := range 3000 {
		b := make([]byte, 1+r.IntN(400))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		b[0] = "[{"[n%2]
		checkSkipRef(t, b, uint16(r.IntN(1<<16))&0xff00)
	}
}

// BenchmarkClassify is the structural pass alone, over the benchmark
// document: vector, and the plain Go path it is tested against.
func BenchmarkClassify(b *testing.B) {
	doc := benchDoc()
	doc = doc[:len(doc)/64*64]
	m := make([]blockMasks, len(doc)/64)
	b.Run("vector", func(b *testing.B) {
		if !haveClassifyVector {
			b.Skip("no vector classify on this CPU")
		}
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			classify(doc, m)
		}
	})
	b.Run("generic", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			classifyGeneric(doc, m)
		}
	})
}
