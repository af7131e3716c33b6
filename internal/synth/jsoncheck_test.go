package synth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// jv is a decoded JSON value that keeps the order of object keys.
type jv struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys []string
	vals []*jv
	s    string
	b    bool
}

// get returns the member k of an object, or nil.
func (v *jv) get(k string) *jv {
	if v == nil || v.kind != 'o' {
		return nil
	}
	for i, key := range v.keys {
		if key == k {
			return v.vals[i]
		}
	}
	return nil
}

// lenient turns the bare tokens NaN, Infinity and -Infinity (outside
// strings) into strings so that encoding/json accepts the text.
func lenient(b []byte) []byte {
	out := make([]byte, 0, len(b)+1024)
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if in {
			out = append(out, c)
			if c == '\\' && i+1 < len(b) {
				i++
				out = append(out, b[i])
			} else if c == '"' {
				in = false
			}
			continue
		}
		switch {
		case c == '"':
			in = true
			out = append(out, c)
		case c == 'N' && bytes.HasPrefix(b[i:], []byte("NaN")):
			out = append(out, `"NaN"`...)
			i += 2
		case c == 'I' && bytes.HasPrefix(b[i:], []byte("Infinity")):
			out = append(out, `"Infinity"`...)
			i += 7
		case c == '-' && i+1 < len(b) && b[i+1] == 'I' && bytes.HasPrefix(b[i:], []byte("-Infinity")):
			out = append(out, `"-Infinity"`...)
			i += 8
		default:
			out = append(out, c)
		}
	}
	return out
}

// parseLenient decodes a whole document. On a syntax error it returns what
// was decoded so far together with the error.
func parseLenient(b []byte) (*jv, error) {
	dec := json.NewDecoder(bytes.NewReader(lenient(b)))
	dec.UseNumber()
	v, err := readJV(dec)
	if err != nil {
		return v, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, errors.New("trailing data")
	}
	return v, nil
}

func readJV(dec *json.Decoder) (*jv, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &jv{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return v, err
				}
				k, ok := kt.(string)
				if !ok {
					return v, fmt.Errorf("object key %v", kt)
				}
				x, err := readJV(dec)
				v.keys = append(v.keys, k)
				v.vals = append(v.vals, x)
				if err != nil {
					return v, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return v, err
			}
			return v, nil
		case '[':
			v := &jv{kind: 'a'}
			for dec.More() {
				x, err := readJV(dec)
				v.vals = append(v.vals, x)
				if err != nil {
					return v, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return v, err
			}
			return v, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &jv{kind: 's', s: t}, nil
	case json.Number:
		return &jv{kind: 'n', s: string(t)}, nil
	case bool:
		return &jv{kind: 'b', b: t}, nil
	case nil:
		return &jv{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// num returns a statistic as a float64: numbers, bare tokens and the
// strings "nan", "inf", "-inf".
func (v *jv) num() (float64, bool) {
	if v == nil {
		return 0, false
	}
	switch v.kind {
	case 'n':
		f, err := strconv.ParseFloat(v.s, 64)
		return f, err == nil
	case 's':
		switch v.s {
		case "NaN", "nan":
			return math.NaN(), true
		case "Infinity", "inf":
			return math.Inf(1), true
		case "-Infinity", "-inf":
			return math.Inf(-1), true
		}
		f, err := strconv.ParseFloat(v.s, 64) // a numeric string (Format.StatStrings)
		return f, err == nil
	}
	return 0, false
}

// stat returns a statistic of a tensor, its key in any case
// (Format.StatKeys).
func (v *jv) stat(k string) *jv {
	if x := v.get(k); x != nil {
		return x
	}
	if v == nil || v.kind != 'o' {
		return nil
	}
	for i, key := range v.keys {
		if strings.EqualFold(key, k) {
			return v.vals[i]
		}
	}
	return nil
}

// isTensor reports whether v is a tensor object.
func (v *jv) isTensor() bool {
	return v != nil && v.kind == 'o' && len(v.keys) > 0 && v.keys[0] == "type" && v.get("dtype") != nil
}

// tensorsIn walks v and returns its tensor objects.
func tensorsIn(v *jv, dst []*jv) []*jv {
	if v == nil {
		return dst
	}
	if v.isTensor() {
		return append(dst, v)
	}
	for _, x := range v.vals {
		dst = tensorsIn(x, dst)
	}
	return dst
}

// nonFinite summarises the non-finite statistics of tensors: NaN in Max or
// Min, +Inf in Max, -Inf in Min.
type nonFinite struct{ nan, pinf, ninf bool }

func (n nonFinite) any() bool { return n.nan || n.pinf || n.ninf }

func scanTensors(ts []*jv) nonFinite {
	var n nonFinite
	for _, t := range ts {
		mx, ok1 := t.stat("Max").num()
		mn, ok2 := t.stat("Min").num()
		if ok1 && math.IsNaN(mx) || ok2 && math.IsNaN(mn) {
			n.nan = true
		}
		if ok1 && math.IsInf(mx, 1) {
			n.pinf = true
		}
		if ok2 && math.IsInf(mn, -1) {
			n.ninf = true
		}
	}
	return n
}

// parseFast decodes lenient(b) like parseLenient, by recursive descent; it
// is checked against parseLenient (encoding/json tokens) and used for the
// bulk of the files. On a syntax error it returns what it decoded so far.
func parseFast(b []byte) (*jv, error) {
	p := &fastParser{b: b}
	v, err := p.value()
	if err != nil {
		return v, err
	}
	p.ws()
	if p.i != len(p.b) {
		return v, fmt.Errorf("trailing data at %d", p.i)
	}
	return v, nil
}

type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\n' || p.b[p.i] == '\t' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *fastParser) fail(what string) error {
	return fmt.Errorf("%s at offset %d", what, p.i)
}

func (p *fastParser) value() (*jv, error) {
	p.ws()
	if p.i >= len(p.b) {
		return nil, p.fail("unexpected end")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		v := &jv{kind: 'o'}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return v, nil
		}
		for {
			p.ws()
			k, err := p.str()
			if err != nil {
				return v, err
			}
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return v, p.fail("missing colon")
			}
			p.i++
			x, err := p.value()
			v.keys = append(v.keys, k)
			v.vals = append(v.vals, x)
			if err != nil {
				return v, err
			}
			p.ws()
			if p.i >= len(p.b) {
				return v, p.fail("unexpected end")
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == '}' {
				p.i++
				return v, nil
			}
			return v, p.fail("bad object")
		}
	case c == '[':
		p.i++
		v := &jv{kind: 'a'}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return v, nil
		}
		for {
			x, err := p.value()
			v.vals = append(v.vals, x)
			if err != nil {
				return v, err
			}
			p.ws()
			if p.i >= len(p.b) {
				return v, p.fail("unexpected end")
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == ']' {
				p.i++
				return v, nil
			}
			return v, p.fail("bad array")
		}
	case c == '"':
		s, err := p.str()
		return &jv{kind: 's', s: s}, err
	case bytes.HasPrefix(p.b[p.i:], []byte("NaN")):
		p.i += 3
		return &jv{kind: 's', s: "NaN"}, nil
	case bytes.HasPrefix(p.b[p.i:], []byte("Infinity")):
		p.i += 8
		return &jv{kind: 's', s: "Infinity"}, nil
	case bytes.HasPrefix(p.b[p.i:], []byte("-Infinity")):
		p.i += 9
		return &jv{kind: 's', s: "-Infinity"}, nil
	case bytes.HasPrefix(p.b[p.i:], []byte("null")):
		p.i += 4
		return &jv{kind: 'z'}, nil
	case bytes.HasPrefix(p.b[p.i:], []byte("true")):
		p.i += 4
		return &jv{kind: 'b', b: true}, nil
	case bytes.HasPrefix(p.b[p.i:], []byte("false")):
		p.i += 5
		return &jv{kind: 'b'}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		j := p.i
		for j < len(p.b) && strings.IndexByte("+-0123456789.eE", p.b[j]) >= 0 {
			j++
		}
		s := string(p.b[p.i:j])
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return nil, p.fail("bad number")
		}
		p.i = j
		return &jv{kind: 'n', s: s}, nil
	}
	return nil, p.fail("unexpected character")
}

func (p *fastParser) str() (string, error) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", p.fail("expected string")
	}
	j := p.i + 1
	esc := false
	for j < len(p.b) && p.b[j] != '"' {
		if p.b[j] == '\\' {
			esc = true
			j++
		}
		j++
	}
	if j >= len(p.b) {
		return "", p.fail("unterminated string")
	}
	raw := p.b[p.i : j+1]
	p.i = j + 1
	if !esc {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// sameJV reports whether two decoded values are identical.
func sameJV(a, b *jv) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.kind != b.kind || a.s != b.s || a.b != b.b || len(a.vals) != len(b.vals) || !slices.Equal(a.keys, b.keys) {
		return false
	}
	for i := range a.vals {
		if !sameJV(a.vals[i], b.vals[i]) {
			return false
		}
	}
	return true
}
