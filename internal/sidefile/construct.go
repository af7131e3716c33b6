package sidefile

import (
	"fmt"
	"io"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
	"github.com/nanhunt/nanhunt/internal/notation"
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
	c := Construct{}
	err := readParents(r, func(name string) bool { return want == nil || want[name] }, c)
	return c, err
}

// maxModules bounds the module calls ReadAncestors keeps on its first pass.
const maxModules = 1 << 18

// maxPasses bounds the passes of ReadAncestors: each climbs one or more
// levels of the module tree, which msprobe rarely writes deeper than 20.
const maxPasses = 32

// ReadAncestors reads construct.json keeping the wanted calls and every
// module call above them (what Chain needs), streaming. The first pass
// keeps the wanted calls and up to maxModules module calls, which are far
// fewer than the API calls of a step; a parent it did not keep is looked
// up by another pass. A backward call's forward call is wanted with it. Memory follows the modules, not the file.
func ReadAncestors(r io.ReadSeeker, want map[string]bool) (Construct, error) {
	calls := make(map[string]bool, 2*len(want))
	for name := range want {
		calls[name], calls[notation.ParseName(name).ForwardName()] = true, true // Chain falls back to the forward call
	}
	want = calls
	c := Construct{}
	modules := 0
	keep := func(name string) bool {
		if want[name] {
			return true
		}
		if modules < maxModules && notation.ParseName(name).Module {
			modules++
			return true
		}
		return false
	}
	for pass := 0; pass < maxPasses; pass++ {
		if pass > 0 {
			missing := map[string]bool{}
			for name := range want {
				seen := map[string]bool{name: true}
				for p := c[name]; p != "" && !seen[p]; p = c[p] {
					if _, ok := c[p]; !ok {
						missing[p] = true
						break
					}
					seen[p] = true
				}
			}
			if len(missing) == 0 {
				return c, nil
			}
			if _, err := r.Seek(0, io.SeekStart); err != nil {
				return c, err
			}
			keep = func(name string) bool { return missing[name] }
		}
		before := len(c)
		if err := readParents(r, keep, c); err != nil {
			return c, err
		}
		if pass > 0 && len(c) == before {
			return c, nil // the missing parents are not in the file
		}
	}
	return c, nil
}

// ReadParentsWhere is ReadParents that also keeps the parent of every name
// whose parent also accepts (the last value written for a name decides);
// with also nil it is ReadParents of the wanted names.
func ReadParentsWhere(r io.Reader, want map[string]bool, also func(parent string) bool) (Construct, error) {
	c := Construct{}
	err := readParentsWhere(r, func(name string) bool { return want[name] }, also, c)
	return c, err
}

func readParents(r io.Reader, keep func(string) bool, c Construct) error {
	return readParentsWhere(r, keep, nil, c)
}

func readParentsWhere(r io.Reader, keep, also func(string) bool, c Construct) error {
	lx := sideLexer(r)
	defer sideLexers.Put(lx)
	tok, err := lx.Next()
	if err != nil {
		return stackErr(lx, err)
	}
	if tok.Kind != jsonlex.ObjectStart {
		return fmt.Errorf("construct.json: starts with %v, want an object", tok.Kind)
	}
	for {
		tok, err := lx.Next()
		if err != nil {
			return stackErr(lx, err)
		}
		if tok.Kind == jsonlex.ObjectEnd {
			return nil
		}
		name := jsonlex.Text(tok.Bytes)
		tok, err = lx.Next()
		if err != nil {
			return stackErr(lx, err)
		}
		kept := keep(name)
		if !kept && also == nil {
			if tok.Kind == jsonlex.ObjectStart || tok.Kind == jsonlex.ArrayStart {
				if err := skipContainer(lx); err != nil {
					return stackErr(lx, err)
				}
			}
			continue
		}
		parent, call, err := parentValue(lx, tok)
		if err != nil {
			return stackErr(lx, err)
		}
		switch {
		case !call:
		case kept || also(parent):
			c[name] = parent
		case len(c) > 0:
			delete(c, name) // an earlier value of the name was accepted
		}
	}
}

// parentValue reads a member's value, whose first token is tok: a parent
// name, null or [parent, micro_step] (call is set), or something that is
// no call ("megatron_micro_step_number": N, an object).
func parentValue(lx *jsonlex.Lexer, tok jsonlex.Token) (parent string, call bool, err error) {
	switch tok.Kind {
	case jsonlex.String:
		return jsonlex.Text(tok.Bytes), true, nil
	case jsonlex.ArrayStart: // [parent, micro_step]
		for i := 0; ; i++ {
			tok, err := lx.Next()
			if err != nil {
				return "", false, err
			}
			if tok.Kind == jsonlex.ArrayEnd {
				return parent, true, nil
			}
			if i == 0 && tok.Kind == jsonlex.String {
				parent = jsonlex.Text(tok.Bytes)
			} else if tok.Kind == jsonlex.ObjectStart || tok.Kind == jsonlex.ArrayStart {
				if err := skipContainer(lx); err != nil {
					return "", false, err
				}
			}
		}
	case jsonlex.ObjectStart:
		return "", false, skipContainer(lx)
	case jsonlex.Number:
		return "", false, nil
	}
	return "", true, nil // null, or another literal: a call without a parent
}

// Chain is the line of parents of a call, outermost first, without the
// call itself. A backward API call whose parent was not recorded takes the
// chain of its forward call.
func (c Construct) Chain(name string) []string {
	if _, ok := c[name]; !ok || c[name] == "" {
		if n := notation.ParseName(name); n.Dir == notation.Backward {
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
