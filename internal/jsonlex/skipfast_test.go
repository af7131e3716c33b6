package jsonlex

import (
	"bytes"
	"testing"
)

// FuzzSkipValueFast checks that on a valid document SkipValueFast at any
// token leaves the lexer exactly where SkipValue does, and that on any
// input it never panics.
func FuzzSkipValueFast(f *testing.F) {
	for i, s := range append(fuzzSeeds, windowDocs...) {
		f.Add([]byte(s), uint16(i*7))
	}
	f.Add([]byte(`{"a": ["x\\\\\"y", {"b": "\\\\"}], "c": 1}`), uint16(3))
	f.Fuzz(checkSkipFast)
}

func checkSkipFast(t *testing.T, in []byte, k uint16) {
	full, ferr := lexAll(bytes.NewReader(in), Options{})
	ws := []int{0, 1, 2, 5, 64}[int(k>>8)%5]
	if ferr != nil {
		// anything may happen but a panic
		l := New(bytes.NewReader(in), Options{WindowSize: ws})
		for i := 0; i < int(k)%8; i++ {
			if _, err := l.Next(); err != nil {
				return
			}
		}
		_ = l.SkipValueFast()
		return
	}
	at := int(k) % len(full)
	a := New(bytes.NewReader(in), Options{WindowSize: ws})
	b := New(bytes.NewReader(in), Options{WindowSize: 3})
	for i := 0; i < at; i++ {
		a.Next()
		b.Next()
	}
	if err := a.SkipValueFast(); err != nil {
		t.Fatalf("SkipValueFast at token %d: %v", at, err)
	}
	if err := b.SkipValue(); err != nil {
		t.Fatalf("SkipValue at token %d: %v", at, err)
	}
	if a.InputOffset() != b.InputOffset() || a.Depth() != b.Depth() {
		t.Fatalf("at token %d: fast skip ends at %d depth %d, SkipValue at %d depth %d", at, a.InputOffset(), a.Depth(), b.InputOffset(), b.Depth())
	}
	for {
		ta, ea := a.Next()
		tb, eb := b.Next()
		if (ea == nil) != (eb == nil) || ta.Kind != tb.Kind || ta.Offset != tb.Offset || string(ta.Bytes) != string(tb.Bytes) {
			t.Fatalf("after the skip: %v %v / %v %v", ta, ea, tb, eb)
		}
		if ea != nil || ta.Kind == EOF {
			return
		}
	}
}

func TestSkipValueFastTruncated(t *testing.T) {
	doc := []byte(`{"a": {"b": [1, 2, "x\"]"], "c": {}}, "d": 2}`)
	for cut := 6; cut < 36; cut++ {
		l := New(bytes.NewReader(doc[:cut]), Options{WindowSize: 4})
		l.Next() // {
		l.Next() // "a"
		err := l.SkipValueFast()
		se, ok := err.(*SyntaxError)
		if !ok || !se.Truncated {
			t.Fatalf("cut at %d: %v, want a truncation", cut, err)
		}
	}
}
