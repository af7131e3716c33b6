package jsonlex

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// fuzzSeeds are added to the checked-in corpus in testdata/fuzz.
var fuzzSeeds = []string{
	`{"a":[1,2.5e-3,-0,true,false,null,NaN,Infinity,-Infinity,"s\u00e9\ud83d\ude00"]}`,
	`[NaN,-Infinity]`,
	`{"NaN":NaN}`,
	`{NaN:1}`,
	`[-NaN]`,
	`[01]`,
	`[1.]`,
	`"\ud800\udc00\ud800"`,
	"\"\xff\"",
	`[[[[[[[[[[]]]]]]]]]]`,
	`{"a":1,}`,
	` `,
}

func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, s := range windowDocs {
		f.Add([]byte(s))
	}
}

// FuzzLexer compares the lexer with jsontext (through bareShim) and the
// lexer with itself through tiny windows and one-byte reads.
func FuzzLexer(f *testing.F) {
	addSeeds(f)
	f.Fuzz(checkLexer)
}

// checkLexer is the body of FuzzLexer.
func checkLexer(t *testing.T, in []byte) {
	got, err := lexAll(bytes.NewReader(in), Options{})
	if err != nil {
		checkError(t, err, len(in))
	} else if last := got[len(got)-1]; last.Kind != EOF || last.Off != int64(len(in)) {
		t.Fatalf("ends with %+v", last)
	}
	for i, tk := range got {
		if tk.Off < 0 || tk.End < tk.Off || tk.End > int64(len(in)) || (i > 0 && tk.Off < got[i-1].End) {
			t.Fatalf("token %d %+v: bad offsets", i, tk)
		}
	}

	// The window must not matter, down to the error message.
	for _, alt := range []struct {
		name string
		opt  Options
		wrap func(io.Reader) io.Reader
	}{
		{"window 1", Options{WindowSize: 1}, nil},
		{"window 3", Options{WindowSize: 3}, nil},
		{"window 7", Options{WindowSize: 7}, nil},
		{"window 16, half reads", Options{WindowSize: 16}, iotest.HalfReader},
		{"one-byte reads", Options{}, iotest.OneByteReader},
	} {
		var r io.Reader = bytes.NewReader(in)
		if alt.wrap != nil {
			r = alt.wrap(r)
		}
		toks, aerr := lexAll(r, alt.opt)
		if errString(aerr) != errString(err) {
			t.Fatalf("%s: error %v, default window: %v", alt.name, aerr, err)
		}
		if ok, diff := equalToks(toks, got); !ok {
			t.Fatalf("%s: %s", alt.name, diff)
		}
	}

	if !oracleUsable(in) {
		return
	}
	want, ok := oracleTokens(bytes.NewReader(bareShim(in)))
	if ok != (err == nil) {
		t.Fatalf("oracle accepts=%v, lexer error: %v\noracle tokens: %s\nlexer tokens: %s", ok, err, kinds(want), kinds(got))
	}
	if ok {
		if same, diff := equalToks(withReplacedUTF8(got), want); !same {
			t.Fatalf("differs from oracle: %s", diff)
		}
	}
}

// FuzzSkipValue checks that SkipValue at any token leaves the lexer where
// consuming the tokens of the value with Next does.
func FuzzSkipValue(f *testing.F) {
	for i, s := range append(fuzzSeeds, windowDocs...) {
		f.Add([]byte(s), uint16(i*7))
	}
	f.Fuzz(checkSkip)
}

// checkSkip is the body of FuzzSkipValue.
func checkSkip(t *testing.T, in []byte, k uint16) {
	full, ferr := lexAll(bytes.NewReader(in), Options{})
	n := len(full)
	if ferr != nil {
		n++ // the failing call
	}
	at := int(k) % n
	ws := []int{0, 1, 2, 5, 64}[int(k>>8)%5]

	// Where the skip must end: at the token closing the value that
	// starts at full[at], or at the error.
	end, depth := at, 0
	for ; end < len(full); end++ {
		switch full[end].Kind {
		case ObjectStart, ArrayStart:
			depth++
		case ObjectEnd, ArrayEnd:
			depth--
		}
		if depth <= 0 {
			break
		}
	}

	l := New(bytes.NewReader(in), Options{WindowSize: ws})
	for i := 0; i < at; i++ {
		if _, err := l.Next(); err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
	}
	err := l.SkipValue()
	if end >= len(full) { // the full parse fails inside the value
		if err == nil || err.Error() != ferr.Error() {
			t.Fatalf("SkipValue at token %d: error %v, want %v", at, err, ferr)
		}
		return
	}
	if err != nil {
		t.Fatalf("SkipValue at token %d (%v): %v", at, full[at], err)
	}
	if l.InputOffset() != full[end].End || l.Depth() != full[end].Depth {
		t.Fatalf("after SkipValue at token %d: offset %d depth %d, want %d %d",
			at, l.InputOffset(), l.Depth(), full[end].End, full[end].Depth)
	}
	if full[end].Kind == EOF {
		return
	}
	// The rest must follow as in the full parse.
	for i := end + 1; ; i++ {
		tk, err := l.Next()
		if i == len(full) {
			if err == nil || err.Error() != ferr.Error() {
				t.Fatalf("token %d: error %v, want %v", i, err, ferr)
			}
			return
		}
		if err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if got := (tok{tk.Kind, tk.Offset, l.InputOffset(), l.Depth(), string(tk.Bytes)}); got != full[i] {
			t.Fatalf("token %d: %+v, want %+v", i, got, full[i])
		}
		if tk.Kind == EOF {
			return
		}
	}
}

// TestCorpusFiles makes sure the checked-in corpus is present and valid
// for the fuzz targets (go test runs it as regression tests).
func TestCorpusFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzLexer", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no corpus in testdata/fuzz/FuzzLexer")
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("go test fuzz v1\n")) {
			t.Errorf("%s: not a fuzz corpus file", name)
		}
	}
}
