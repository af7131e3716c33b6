package dump

import (
	"fmt"
	"io"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// Construct is construct.json: each call's parent module call. Parents are
// written as a name, null or "" (top level), [name, micro_step] (Megatron),
// or the pseudo-parents "optimizer" and "clip_grad". Levels L1 and L2 write {}.
type Construct map[string]string

// ReadConstruct reads construct.json.
func ReadConstruct(r io.Reader) (Construct, error) { return ReadParents(r, nil) }

// ReadParents reads construct.json keeping only the parents of the wanted
// names (all of them when want is nil), streaming: memory follows what is
// kept, not the file.
func ReadParents(r io.Reader, want map[string]bool) (Construct, error) {
	lx := jsonlex.New(r, jsonlex.Options{MaxDepth: 64})
	c := Construct{}
	tok, err := lx.Next()
	if err != nil {
		return c, stackErr(lx, err)
	}
	if tok.Kind != jsonlex.ObjectStart {
		return c, fmt.Errorf("construct.json: starts with %v, want an object", tok.Kind)
	}
	for {
		tok, err := lx.Next()
		if err != nil {
			return c, stackErr(lx, err)
		}
		if tok.Kind == jsonlex.ObjectEnd {
			return c, nil
		}
		name := string(tok.Bytes)
		tok, err = lx.Next()
		if err != nil {
			return c, stackErr(lx, err)
		}
		if want != nil && !want[name] {
			if tok.Kind == jsonlex.ObjectStart || tok.Kind == jsonlex.ArrayStart {
				if err := skipContainer(lx); err != nil {
					return c, stackErr(lx, err)
				}
			}
			continue
		}
		switch tok.Kind {
		case jsonlex.String:
			c[name] = string(tok.Bytes)
		case jsonlex.Null:
			c[name] = ""
		case jsonlex.ArrayStart: // [parent, micro_step]
			parent := ""
			for i := 0; ; i++ {
				tok, err := lx.Next()
				if err != nil {
					return c, stackErr(lx, err)
				}
				if tok.Kind == jsonlex.ArrayEnd {
					break
				}
				if i == 0 && tok.Kind == jsonlex.String {
					parent = string(tok.Bytes)
				} else if tok.Kind == jsonlex.ObjectStart || tok.Kind == jsonlex.ArrayStart {
					if err := skipContainer(lx); err != nil {
						return c, stackErr(lx, err)
					}
				}
			}
			c[name] = parent
		case jsonlex.ObjectStart:
			if err := skipContainer(lx); err != nil {
				return c, stackErr(lx, err)
			}
		case jsonlex.Number:
			// "megatron_micro_step_number": N is not a call
		default:
			c[name] = ""
		}
	}
}

// Chain is the line of parents of a call, outermost first, without the
// call itself. A backward API call whose parent was not recorded takes the
// chain of its forward call.
func (c Construct) Chain(name string) []string {
	if _, ok := c[name]; !ok || c[name] == "" {
		if n := ParseName(name); n.Dir == Backward {
			if fw := n.ForwardName(); fw != name {
				if p, ok := c[fw]; ok && p != "" {
					name = fw
				}
			}
		}
	}
	var chain []string
	seen := map[string]bool{name: true}
	for p := c[name]; p != "" && !seen[p] && len(chain) < 1000; p = c[p] {
		seen[p] = true
		chain = append(chain, p)
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

// InUpdate reports whether construct.json places the call inside
// optimizer.step() or gradient clipping.
func (c Construct) InUpdate(name string) bool {
	for _, p := range c.Chain(name) {
		if p == "optimizer" || p == "clip_grad" {
			return true
		}
	}
	return false
}
