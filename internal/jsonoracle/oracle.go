package jsonoracle

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// Kind is the kind of a Node.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
	NaN    // bare NaN
	PosInf // bare Infinity
	NegInf // bare -Infinity
)

// Node is a decoded value; objects keep their members in file order.
type Node struct {
	Kind    Kind
	Bool    bool
	Literal string // Number: the literal; String: the value
	Elems   []*Node
	Members []Member
}

// Member is one name/value pair of an object.
type Member struct {
	Name  string
	Value *Node
}

// ErrMarker is returned for input that already contains the strings the
// shim uses for bare tokens: such input cannot be decoded unambiguously.
var ErrMarker = errors.New("input contains the oracle's marker strings")

// marker starts the strings that stand for bare tokens; the shim writes it
// escaped, so the strict decoder accepts it.
const (
	marker        = "\x00\x01nanhunt-oracle:"
	markerEscaped = `\u0000\u0001nanhunt-oracle:`
)

// Decode decodes one JSON document.
func Decode(data []byte) (*Node, error) {
	if bytes.Contains(data, []byte(`\u0000\u0001`)) || bytes.Contains(data, []byte{0, 1}) {
		return nil, ErrMarker
	}
	dec := jsontext.NewDecoder(bytes.NewReader(Shim(data)), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	n, err := decode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, fmt.Errorf("data after the top-level value: %v", err)
	}
	return n, nil
}

func decode(dec *jsontext.Decoder) (*Node, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return &Node{Kind: Null}, nil
	case 't', 'f':
		return &Node{Kind: Bool, Bool: tok.Bool()}, nil
	case '0':
		return &Node{Kind: Number, Literal: tok.String()}, nil
	case '"':
		s := tok.String()
		switch s {
		case marker + "NaN":
			return &Node{Kind: NaN}, nil
		case marker + "Infinity":
			return &Node{Kind: PosInf}, nil
		case marker + "-Infinity":
			return &Node{Kind: NegInf}, nil
		}
		return &Node{Kind: String, Literal: s}, nil
	case '[':
		n := &Node{Kind: Array}
		for dec.PeekKind() != ']' {
			e, err := decode(dec)
			if err != nil {
				return nil, err
			}
			n.Elems = append(n.Elems, e)
		}
		_, err := dec.ReadToken()
		return n, err
	case '{':
		n := &Node{Kind: Object}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String()
			if tok.Kind() != '"' || bytes.HasPrefix([]byte(name), []byte(marker)) {
				return nil, fmt.Errorf("bad object member name")
			}
			v, err := decode(dec)
			if err != nil {
				return nil, err
			}
			n.Members = append(n.Members, Member{Name: name, Value: v})
		}
		_, err := dec.ReadToken()
		return n, err
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// Shim rewrites bare NaN, Infinity and -Infinity outside strings into marker
// strings that a strict decoder accepts.
func Shim(in []byte) []byte {
	out := make([]byte, 0, len(in)+64)
	inString, escaped := false, false
	for i := 0; i < len(in); i++ {
		c := in[i]
		if inString {
			out = append(out, c)
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
		switch {
		case c == '"':
			inString = true
		case bytes.HasPrefix(in[i:], []byte("NaN")):
			out = append(out, `"`+markerEscaped+`NaN"`...)
			i += 2
			continue
		case bytes.HasPrefix(in[i:], []byte("Infinity")):
			out = append(out, `"`+markerEscaped+`Infinity"`...)
			i += 7
			continue
		case bytes.HasPrefix(in[i:], []byte("-Infinity")):
			out = append(out, `"`+markerEscaped+`-Infinity"`...)
			i += 8
			continue
		}
		out = append(out, c)
	}
	return out
}
