package repro

import (
	"bytes"
	"fmt"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// node is a decoded JSON value of a dump.json entry. Objects keep their
// members in file order.
type node struct {
	Kind    jsonlex.Kind // ObjectStart, ArrayStart, String, Number, True, False, Null, NaN, PosInf, NegInf
	Text    string       // String: the value; Number: the literal
	Elems   []*node
	Members []member
	Offset  int64 // byte offset of the value's first byte
}

// member is one name/value pair of an object.
type member struct {
	Name  string
	Value *node
}

// get returns the value of the first member with the given name, or nil.
func (n *node) get(name string) *node {
	if n == nil || n.Kind != jsonlex.ObjectStart {
		return nil
	}
	for _, m := range n.Members {
		if m.Name == name {
			return m.Value
		}
	}
	return nil
}

// maxTreeDepth bounds the nesting of a decoded value.
const maxTreeDepth = 256

// decodeTree decodes one JSON document (msprobe's dialect, with bare NaN
// and Infinity). Offsets are those of data shifted by base.
func decodeTree(data []byte, base int64) (*node, error) {
	lx := jsonlex.New(bytes.NewReader(data), jsonlex.Options{WindowSize: 64 << 10, MaxDepth: maxTreeDepth, MaxStringLen: 1 << 20})
	tok, err := lx.Next()
	if err != nil {
		return nil, shiftErr(err, base)
	}
	n, err := treeValue(lx, tok, base)
	if err != nil {
		return nil, shiftErr(err, base)
	}
	if tok, err = lx.Next(); err != nil {
		return nil, shiftErr(err, base)
	} else if tok.Kind != jsonlex.EOF {
		return nil, fmt.Errorf("offset %d: unexpected %v after the value", base+tok.Offset, tok.Kind)
	}
	return n, nil
}

func shiftErr(err error, base int64) error {
	if se, ok := err.(*jsonlex.SyntaxError); ok {
		c := *se
		c.Offset += base
		return &c
	}
	return err
}

func treeValue(lx *jsonlex.Lexer, tok jsonlex.Token, base int64) (*node, error) {
	n := &node{Kind: tok.Kind, Offset: base + tok.Offset}
	switch tok.Kind {
	case jsonlex.String, jsonlex.Number:
		n.Text = string(tok.Bytes)
	case jsonlex.ArrayStart:
		for {
			t, err := lx.Next()
			if err != nil {
				return nil, err
			}
			if t.Kind == jsonlex.ArrayEnd {
				return n, nil
			}
			e, err := treeValue(lx, t, base)
			if err != nil {
				return nil, err
			}
			n.Elems = append(n.Elems, e)
		}
	case jsonlex.ObjectStart:
		for {
			t, err := lx.Next()
			if err != nil {
				return nil, err
			}
			if t.Kind == jsonlex.ObjectEnd {
				return n, nil
			}
			name := string(t.Bytes)
			if t, err = lx.Next(); err != nil {
				return nil, err
			}
			v, err := treeValue(lx, t, base)
			if err != nil {
				return nil, err
			}
			n.Members = append(n.Members, member{Name: name, Value: v})
		}
	case jsonlex.True, jsonlex.False, jsonlex.Null, jsonlex.NaN, jsonlex.PosInf, jsonlex.NegInf:
	default:
		return nil, fmt.Errorf("offset %d: unexpected %v", base+tok.Offset, tok.Kind)
	}
	return n, nil
}
