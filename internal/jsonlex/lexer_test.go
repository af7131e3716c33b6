package jsonlex

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestKindString(t *testing.T) {
	for k := EOF; k <= NegInf; k++ {
		if s := k.String(); s == "" || strings.HasPrefix(s, "Kind(") {
			t.Errorf("Kind(%d).String() = %q", k, s)
		}
	}
	if s := Kind(200).String(); s != "Kind(200)" {
		t.Errorf("Kind(200).String() = %q", s)
	}
}

var tokenTests = []struct {
	in   string
	want string
}{
	{`null`, `Null EOF`},
	{` true `, `True EOF`},
	{"\t\r\nfalse\n", `False EOF`},
	{`NaN`, `NaN EOF`},
	{`Infinity`, `PosInf EOF`},
	{`-Infinity`, `NegInf EOF`},
	{`""`, `String:"" EOF`},
	{`"abc"`, `String:"abc" EOF`},
	{`{}`, `ObjectStart ObjectEnd EOF`},
	{`[]`, `ArrayStart ArrayEnd EOF`},
	{`[[]]`, `ArrayStart ArrayStart ArrayEnd ArrayEnd EOF`},
	{`{"a":{}}`, `ObjectStart Name:"a" ObjectStart ObjectEnd ObjectEnd EOF`},
	{`{"a" : 1 , "b":[true,false,null]}`, `ObjectStart Name:"a" Number:"1" Name:"b" ArrayStart True False Null ArrayEnd ObjectEnd EOF`},
	{`[NaN,Infinity,-Infinity]`, `ArrayStart NaN PosInf NegInf ArrayEnd EOF`},
	{`[ NaN , Infinity , -Infinity ]`, `ArrayStart NaN PosInf NegInf ArrayEnd EOF`},
	{`{"Max": NaN, "Min": -Infinity, "Mean": Infinity}`, `ObjectStart Name:"Max" NaN Name:"Min" NegInf Name:"Mean" PosInf ObjectEnd EOF`},
	{`{"NaN": "Infinity"}`, `ObjectStart Name:"NaN" String:"Infinity" ObjectEnd EOF`},
	{`{"a":1,"a":2}`, `ObjectStart Name:"a" Number:"1" Name:"a" Number:"2" ObjectEnd EOF`},
	// numbers
	{`0`, `Number:"0" EOF`},
	{`-0`, `Number:"-0" EOF`},
	{`-0.0`, `Number:"-0.0" EOF`},
	{`1e309`, `Number:"1e309" EOF`},
	{`0.5E-3`, `Number:"0.5E-3" EOF`},
	{`1E+2`, `Number:"1E+2" EOF`},
	{`0e0`, `Number:"0e0" EOF`},
	{`123456789012345678901234567890`, `Number:"123456789012345678901234567890" EOF`},
	{`-4.064884279869618e-12`, `Number:"-4.064884279869618e-12" EOF`},
	{`[1,-2,3.5]`, `ArrayStart Number:"1" Number:"-2" Number:"3.5" ArrayEnd EOF`},
	{`[1 ]`, `ArrayStart Number:"1" ArrayEnd EOF`},
	// escapes
	{`"\"\\\/\b\f\n\r\t"`, `String:"\"\\/\b\f\n\r\t" EOF`},
	{`"a\u0041b"`, `String:"aAb" EOF`},
	{`"\u00e9\u00E9"`, `String:"éé" EOF`},
	{`"\u0000"`, `String:"\x00" EOF`},
	{`"\u20ac"`, `String:"€" EOF`},
	{`"\ud83d\ude00"`, `String:"😀" EOF`},
	{`"\uD83D\uDE00x"`, `String:"😀x" EOF`},
	{`"\ud83dx"`, `String:"�x" EOF`},
	{`"\ud83d"`, `String:"�" EOF`},
	{`"\ude00"`, `String:"�" EOF`},
	{`"\ud83d\n"`, `String:"�\n" EOF`},
	{`"\ud83d\u0041"`, `String:"�A" EOF`},
	{`"\ud83d\ud83d\ude00"`, `String:"�😀" EOF`},
	{`"\ude00\ud83d"`, `String:"��" EOF`},
	{`{"a\tb":"x"}`, `ObjectStart Name:"a\tb" String:"x" ObjectEnd EOF`},
	{"\"caf\xc3\xa9\"", `String:"café" EOF`},
	{"\"\xff\xfe\"", `String:"\xff\xfe" EOF`}, // invalid UTF-8 passes through
	{"\"\x7f\"", `String:"\x7f" EOF`},
}

func TestTokens(t *testing.T) {
	for _, tt := range tokenTests {
		toks, err := lexAll(strings.NewReader(tt.in), Options{})
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if got := kinds(toks); got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

// TestTokensOracle checks the table against jsontext as well.
func TestTokensOracle(t *testing.T) {
	for _, tt := range tokenTests {
		if !oracleUsable([]byte(tt.in)) {
			continue
		}
		want, ok := oracleTokens(bytes.NewReader(bareShim([]byte(tt.in))))
		if !ok {
			t.Errorf("%q: oracle rejects it", tt.in)
			continue
		}
		got, _ := lexAll(strings.NewReader(tt.in), Options{})
		if ok, diff := equalToks(withReplacedUTF8(got), want); !ok {
			t.Errorf("%q: %s", tt.in, diff)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		in        string
		off       int64
		msg       string // a part of the message
		truncated bool
	}{
		{``, 0, "unexpected end of input", true},
		{"  \n", 3, "unexpected end of input", true},
		{`[`, 1, "end of input inside array", true},
		{`{"a":1`, 6, "end of input inside object", true},
		{`"abc`, 4, "end of input inside string", true},
		{`"abc\`, 5, "end of input inside string", true},
		{`"\u12`, 5, "end of input inside string", true},
		{`tru`, 3, "end of input inside literal true", true},
		{`-Inf`, 4, "end of input inside literal -Infinity", true},
		{`-`, 1, "end of input inside number", true},
		{`1.`, 2, "end of input inside number", true},
		{`1e+`, 3, "end of input inside number", true},
		{`01`, 1, "invalid character '1' after leading zero", false},
		{`-01`, 2, "invalid character '1' after leading zero", false},
		{`1.]`, 2, "invalid character ']' after decimal point", false},
		{`[1.]`, 3, "invalid character ']' after decimal point", false},
		{`.5`, 0, "invalid character '.' looking for beginning of value", false},
		{`+1`, 0, "invalid character '+' looking for beginning of value", false},
		{`[-]`, 2, "invalid character ']' after '-'", false},
		{`[-x]`, 2, "invalid character 'x' after '-'", false},
		{`1.2.3`, 3, "invalid character '.' in number", false},
		{`1e5e5`, 3, "invalid character 'e' in number", false},
		{`1ex`, 2, "invalid character 'x' in exponent", false},
		{`[1-2]`, 2, "invalid character '-' in number", false},
		{`[-NaN]`, 2, "invalid character 'N' after '-'", false},
		{`[--Infinity]`, 2, "invalid character '-' after '-'", false},
		{`{NaN: 1}`, 1, "invalid character 'N' looking for beginning of object member name", false},
		{`{Infinity: 1}`, 1, "invalid character 'I' looking for beginning of object member name", false},
		{`{"a" 1}`, 5, "invalid character '1' after object member name", false},
		{`{"a":1 "b":2}`, 7, "invalid character '\"' after object member value", false},
		{`[1 2]`, 3, "invalid character '2' after array element", false},
		{`[1,]`, 3, "trailing comma", false},
		{`{"a":1,}`, 7, "trailing comma", false},
		{`{"a":]`, 5, "invalid character ']' looking for beginning of value", false},
		{`[}`, 1, "invalid character '}' looking for beginning of value", false},
		{`{]`, 1, "invalid character ']' looking for beginning of object member name", false},
		{`{"a":1]`, 6, "invalid character ']' after object member value", false},
		{`[1}`, 2, "invalid character '}' after array element", false},
		{`{} x`, 3, "invalid character 'x' after top-level value", false},
		{`1 2`, 2, "invalid character '2' after top-level value", false},
		{`{}{}`, 2, "invalid character '{' after top-level value", false},
		{`nul`, 3, "end of input inside literal null", true},
		{`nulx`, 3, "invalid character 'x' in literal null", false},
		{`[Nan]`, 3, "invalid character 'n' in literal NaN", false},
		{`[infinity]`, 1, "invalid character 'i' looking for beginning of value", false},
		{`[-Infinite]`, 9, "invalid character 'e' in literal -Infinity", false},
		{`[truex]`, 5, "invalid character 'x' after array element", false},
		{"\"a\nb\"", 2, `invalid character '\n' in string`, false},
		{"\"a\x00b\"", 2, `invalid character '\x00' in string`, false},
		{`"\x"`, 2, "invalid character 'x' in string escape", false},
		{`"\u12g4"`, 5, "invalid character 'g' in \\u escape", false},
		{`"\U0041"`, 2, "invalid character 'U' in string escape", false},
		{`'a'`, 0, "invalid character '\\'' looking for beginning of value", false},
		{"\xef\xbb\xbf{}", 0, "byte order mark", false},
		{`[/* c */]`, 1, "invalid character '/' looking for beginning of value", false},
		{"\v1", 0, `invalid character '\v' looking for beginning of value`, false},
		{"[\xc3\xa9]", 1, `invalid character '\xc3' looking for beginning of value`, false},
	}
	for _, tt := range tests {
		for _, ws := range []int{0, 1, 2, 5} {
			_, err := lexAll(strings.NewReader(tt.in), Options{WindowSize: ws})
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("%q (window %d): error %v, want a *SyntaxError", tt.in, ws, err)
				continue
			}
			if se.Offset != tt.off || !strings.Contains(se.Msg, tt.msg) || se.Truncated != tt.truncated {
				t.Errorf("%q (window %d): got offset %d %q truncated=%v, want offset %d %q truncated=%v",
					tt.in, ws, se.Offset, se.Msg, se.Truncated, tt.off, tt.msg, tt.truncated)
			}
			if want := fmt.Sprintf("offset %d: %s", se.Offset, se.Msg); err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) != tt.truncated {
				t.Errorf("%q: errors.Is(err, io.ErrUnexpectedEOF) = %v", tt.in, !tt.truncated)
			}
			if want, ok := oracleTokens(bytes.NewReader(bareShim([]byte(tt.in)))); ok {
				t.Errorf("%q: the oracle accepts it: %s", tt.in, kinds(want))
			}
		}
	}
}

// sample is a document with every kind of token, escapes and indentation
// like msprobe's.
const sample = `{
 "task": "statistics",
 "level": "L1",
 "dump_data_dir": null,
 "data": {
  "Torch.log.0.forward": {
   "input_args": [
    {
     "type": "torch.Tensor",
     "shape": [
      4,
      8
     ],
     "Max": 1.9843783378601074,
     "Min": -0.75,
     "Mean": NaN,
     "Norm": Infinity,
     "Low": -Infinity,
     "requires_grad": false,
     "ok": true
    }
   ],
   "input_kwargs": {},
   "output": [],
   "esc\"aped\\": "tab\there \u00e9\ud83d\ude00 \/",
   "n": [-0, 0.5E-3, 1e309, -12.5e+3]
  }
 }
}
`

func TestOffsets(t *testing.T) {
	toks, err := lexAll(strings.NewReader(sample), Options{})
	if err != nil {
		t.Fatal(err)
	}
	prevEnd := int64(0)
	for _, tk := range toks {
		if tk.Off < prevEnd || tk.End < tk.Off {
			t.Fatalf("%v: offset %d end %d after previous end %d", tk, tk.Off, tk.End, prevEnd)
		}
		raw := sample[tk.Off:tk.End]
		var want string
		switch tk.Kind {
		case ObjectStart:
			want = "{"
		case ObjectEnd:
			want = "}"
		case ArrayStart:
			want = "["
		case ArrayEnd:
			want = "]"
		case Number:
			want = tk.Text
		case True, False, Null, NaN, PosInf, NegInf:
			want = literalText(tk.Kind)
		case Name, String:
			if raw[0] != '"' || raw[len(raw)-1] != '"' {
				t.Errorf("%v: raw %q", tk, raw)
			}
			want = raw
		case EOF:
			if tk.Off != int64(len(sample)) || tk.End != tk.Off {
				t.Errorf("EOF at %d..%d, want %d", tk.Off, tk.End, len(sample))
			}
		}
		if raw != want {
			t.Errorf("%v: raw text at %d..%d is %q, want %q", tk, tk.Off, tk.End, raw, want)
		}
		prevEnd = tk.End
	}
	// A few fixed points.
	for _, tk := range toks {
		if tk.Kind == Name && tk.Text == "task" && tk.Off != 3 {
			t.Errorf("name task at %d, want 3", tk.Off)
		}
		if tk.Kind == NaN && tk.Off != int64(strings.Index(sample, "NaN")) {
			t.Errorf("NaN at %d", tk.Off)
		}
		if tk.Kind == String && strings.HasPrefix(tk.Text, "tab") && tk.Text != "tab\there é😀 /" {
			t.Errorf("escaped string %q", tk.Text)
		}
		if tk.Kind == Name && strings.HasPrefix(tk.Text, "esc") && tk.Text != `esc"aped\` {
			t.Errorf("escaped name %q", tk.Text)
		}
	}
}

func TestDepth(t *testing.T) {
	l := New(strings.NewReader(`{"a":[1,{"b":2}],"c":3}`), Options{})
	var got []int
	for {
		tk, err := l.Next()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.Depth())
		if tk.Kind == EOF {
			break
		}
	}
	want := []int{1, 1, 2, 2, 3, 3, 3, 2, 1, 1, 1, 0, 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("depths %v, want %v", got, want)
	}
}

// readers returns ways to read in that exercise refills.
func readers(in string) map[string]func() io.Reader {
	return map[string]func() io.Reader{
		"plain":   func() io.Reader { return strings.NewReader(in) },
		"onebyte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(in)) },
		"half":    func() io.Reader { return iotest.HalfReader(strings.NewReader(in)) },
		"dataerr": func() io.Reader { return iotest.DataErrReader(strings.NewReader(in)) },
		"empty":   func() io.Reader { return &emptyReads{r: strings.NewReader(in)} },
	}
}

// emptyReads returns (0, nil) before every real read.
type emptyReads struct {
	r    io.Reader
	flip bool
}

func (e *emptyReads) Read(p []byte) (int, error) {
	e.flip = !e.flip
	if e.flip {
		return 0, nil
	}
	return e.r.Read(p)
}

// windowDocs are documents whose tokens cross window boundaries in many
// ways.
var windowDocs = []string{
	sample,
	`[NaN,Infinity,-Infinity,-0,1e309,"\ud83d\ude00","\ud83dx",true,false,null,{"k\n":"v\\"}]`,
	`"` + strings.Repeat(`ab\"\u00e9`, 40) + `"`,
	`{"` + strings.Repeat("x", 300) + `":` + strings.Repeat("7", 200) + `}`,
	`-Infinity`,
	`12345`,
	`[` + strings.Repeat(`"\uD83D\uDE00",`, 20) + `0]`,
}

func TestWindows(t *testing.T) {
	for di, doc := range windowDocs {
		want, werr := lexAll(strings.NewReader(doc), Options{})
		if werr != nil {
			t.Fatalf("doc %d: %v", di, werr)
		}
		for ws := 1; ws <= 64; ws++ {
			for name, mk := range readers(doc) {
				got, err := lexAll(mk(), Options{WindowSize: ws})
				if err != nil {
					t.Fatalf("doc %d window %d %s: %v", di, ws, name, err)
				}
				if ok, diff := equalToks(got, want); !ok {
					t.Fatalf("doc %d window %d %s: %s", di, ws, name, diff)
				}
			}
		}
	}
}

// TestTruncated cuts sample at every byte: the tokens before the cut must
// be those of the whole document, and the error must say Truncated.
func TestTruncated(t *testing.T) {
	full, err := lexAll(strings.NewReader(sample), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range []int{0, 1, 3, 7} {
		for cut := 0; cut <= strings.LastIndexByte(sample, '}'); cut++ {
			in := sample[:cut]
			got, err := lexAll(strings.NewReader(in), Options{WindowSize: ws})
			var se *SyntaxError
			if !errors.As(err, &se) || !se.Truncated || se.Offset != int64(cut) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("cut %d window %d: error %v, want truncation at %d", cut, ws, err, cut)
			}
			complete := 0
			for _, tk := range full {
				if tk.End <= int64(cut) {
					complete++
				}
			}
			if len(got) < complete || len(got) > complete+1 {
				t.Fatalf("cut %d: %d tokens, want %d (or one more number)", cut, len(got), complete)
			}
			for i, tk := range got {
				if i == complete { // a number cut short is still a number
					f := full[i]
					if tk.Kind != Number || f.Kind != Number || tk.Off != f.Off || !strings.HasPrefix(f.Text, tk.Text) {
						t.Fatalf("cut %d: extra token %+v (full: %+v)", cut, tk, f)
					}
					continue
				}
				if tk != full[i] {
					t.Fatalf("cut %d: token %d is %+v, want %+v", cut, i, tk, full[i])
				}
			}
		}
	}
}
