package sidefile

import (
	"bytes"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// The stack.json and construct.json readers, held to what an independent
// whole-document decoder (jsonoracle) and the formats' rules give: where
// the oracle reads a document, the streaming reader must read it without
// error and give the same frames and parents; where it does not, the
// reader must fail, not panic or hang. Documents that are not valid UTF-8
// (Python's json.dump writes ASCII) are only read for panics: the oracle
// decodes invalid bytes as U+FFFD, the readers pass them through.

var sideSeeds = []string{
	`{"Torch.add.0.forward": ["File /a.py, line 3, in f, \n x = y + 1", "File /b.py, line 9, in g, \n f()"]}`,
	`{"0": [["Torch.add.0.forward", "Tensor.mul.1.forward"], ["File /a.py, line 3, in f, \n x = y * 2"]], "1": [["Module.m.M.forward.0"], []]}`,
	`{"Torch.add.0.forward": "Module.a.A.forward.0", "Module.a.A.forward.0": ["Module.b.B.forward.0", 1], "Module.b.B.forward.0": null, "megatron_micro_step_number": 2}`,
	`{"Torch.add.0.forward": {}, "x": [[], [[1]], "y"], "y": true, "z": NaN}`,
	`{"a": "b", "a": "c", "b": ["a"], "c": [1, "d"]}`,
	`{}`, `[]`, `{"a": [`, `{"a": "\u00e9\ud800"}`,
	`{"Torch.ops.aten.linear_0_0": ["linear", "forward.py", 123], "b": ["f", "g.py", -1], "c": ["f", "g.py", 1, 2], "d": ["f", 3, "g.py"]}`,
}

func FuzzStacks(f *testing.F) {
	for _, s := range sideSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadStacks(bytes.NewReader(data), allNames(data))
		root, oerr := jsonoracle.Decode(data)
		if oerr != nil || depth(root) > 60 || !utf8.Valid(data) {
			return // not a document both read the same way: only no panic is asked
		}
		if root.Kind != jsonoracle.Object {
			if err == nil {
				t.Fatalf("ReadStacks reads a document that is no object")
			}
			return
		}
		if err != nil {
			t.Fatalf("the oracle reads it, ReadStacks fails: %v", err)
		}
		want := oracleStacks(root)
		if !slices.Equal(sortedKeysOf(got), sortedKeysOf(want)) {
			t.Fatalf("names %v, want %v", sortedKeysOf(got), sortedKeysOf(want))
		}
		for name, frames := range want {
			if !slices.Equal(got[name], frames) {
				t.Fatalf("%s: frames %+v, want %+v", name, got[name], frames)
			}
		}
		// asked for some names and for every stack a rule accepts: the
		// names the rule accepts the last stack of, and the named ones
		some, also := someNames(data), func(fr []Frame) bool { return len(fr) > 1 || fr[0].Line%2 == 1 }
		where, err := ReadStacksWhere(bytes.NewReader(data), some, also)
		if err != nil {
			t.Fatalf("ReadStacksWhere fails where ReadStacks reads: %v", err)
		}
		wantWhere := map[string][]Frame{}
		for name, frames := range want {
			if some[name] || also(frames) {
				wantWhere[name] = frames
			}
		}
		if !maps.EqualFunc(where, wantWhere, slices.Equal) {
			t.Fatalf("ReadStacksWhere gives %v, want %v", where, wantWhere)
		}
	})
}

// someNames wants every other string of the document (by length) as a call
// name.
func someNames(data []byte) map[string]bool {
	some := allNames(data)
	maps.DeleteFunc(some, func(name string, _ bool) bool { return len(name)%2 == 1 })
	return some
}

func FuzzConstruct(f *testing.F) {
	for _, s := range sideSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadConstruct(bytes.NewReader(data))
		root, oerr := jsonoracle.Decode(data)
		if oerr != nil || depth(root) > 60 || !utf8.Valid(data) {
			return
		}
		if root.Kind != jsonoracle.Object {
			if err == nil {
				t.Fatalf("ReadConstruct reads a document that is no object")
			}
			return
		}
		if err != nil {
			t.Fatalf("the oracle reads it, ReadConstruct fails: %v", err)
		}
		want := oracleParents(root)
		if !maps.Equal(got, want) {
			t.Fatalf("parents %v, want %v", got, want)
		}
		// asked for some names and for every call whose parent a rule
		// accepts: the named ones, and those whose last parent it accepts
		some, also := someNames(data), func(parent string) bool { return len(parent)%3 == 1 }
		where, err := ReadParentsWhere(bytes.NewReader(data), some, also)
		if err != nil {
			t.Fatalf("ReadParentsWhere fails where ReadConstruct reads: %v", err)
		}
		wantWhere := Construct{}
		for name, parent := range want {
			if some[name] || also(parent) {
				wantWhere[name] = parent
			}
		}
		if !maps.Equal(where, wantWhere) {
			t.Fatalf("ReadParentsWhere gives %v, want %v", where, wantWhere)
		}
		// the streaming chain reader agrees with the whole map
		for _, name := range sortedKeysOf(want) {
			part, err := ReadAncestors(bytes.NewReader(data), map[string]bool{name: true})
			if err != nil {
				t.Fatalf("ReadAncestors: %v", err)
			}
			if g, w := part.Chain(name), want.Chain(name); !slices.Equal(g, w) {
				t.Fatalf("chain of %s: %v, want %v", name, g, w)
			}
		}
	})
}

// oracleStacks applies stack.json's rules to a decoded document: a member
// whose value is a list of strings is v1 (the key names the call); a list
// of exactly a string, a string and a number of at most nine digits is the
// skill's [function, file, line], one frame; a list whose first item is a
// list is v2 ([names], [lines]); strings are kept, anything else in those
// lists is passed over; a call without lines has no stack; a later member
// wins.
func oracleStacks(root *jsonoracle.Node) map[string][]Frame {
	out := map[string][]Frame{}
	if root.Kind != jsonoracle.Object {
		return out
	}
	for _, m := range root.Members {
		v := m.Value
		if v.Kind != jsonoracle.Array || len(v.Elems) == 0 {
			continue
		}
		if e := v.Elems; len(e) == 3 && e[0].Kind == jsonoracle.String && e[1].Kind == jsonoracle.String && e[2].Kind == jsonoracle.Number {
			if line, ok := oIndex(e[2].Literal); ok {
				out[m.Name] = []Frame{{Func: e[0].Literal, File: e[1].Literal, Line: line}}
				continue
			}
		}
		var names, lines []string
		switch v.Elems[0].Kind {
		case jsonoracle.String:
			names, lines = []string{m.Name}, stringsOf(v.Elems)
		case jsonoracle.Array:
			names = stringsOf(v.Elems[0].Elems)
			if len(v.Elems) > 1 && v.Elems[1].Kind == jsonoracle.Array {
				lines = stringsOf(v.Elems[1].Elems)
			}
		}
		if len(lines) == 0 {
			continue
		}
		var frames []Frame
		for _, l := range lines {
			frames = append(frames, ParseFrame(l))
		}
		for _, n := range names {
			out[n] = frames
		}
	}
	return out
}

// oracleParents applies construct.json's rules: a string is the parent,
// null (or a bool, NaN, Infinity) the top level, a list's first item the
// parent when it is a string (else the top level); objects and numbers
// are not calls; a later member wins.
func oracleParents(root *jsonoracle.Node) Construct {
	c := Construct{}
	if root.Kind != jsonoracle.Object {
		return c
	}
	for _, m := range root.Members {
		v := m.Value
		switch v.Kind {
		case jsonoracle.String:
			c[m.Name] = v.Literal
		case jsonoracle.Array:
			c[m.Name] = ""
			if len(v.Elems) > 0 && v.Elems[0].Kind == jsonoracle.String {
				c[m.Name] = v.Elems[0].Literal
			}
		case jsonoracle.Object, jsonoracle.Number:
		default:
			c[m.Name] = ""
		}
	}
	return c
}

func stringsOf(nodes []*jsonoracle.Node) []string {
	var out []string
	for _, n := range nodes {
		if n.Kind == jsonoracle.String {
			out = append(out, n.Literal)
		}
	}
	return out
}

// allNames wants every string of the document as a call name.
func allNames(data []byte) map[string]bool {
	want := map[string]bool{}
	root, err := jsonoracle.Decode(data)
	if err != nil {
		return want
	}
	var walk func(*jsonoracle.Node)
	walk = func(n *jsonoracle.Node) {
		if n.Kind == jsonoracle.String {
			want[n.Literal] = true
		}
		for _, e := range n.Elems {
			walk(e)
		}
		for _, m := range n.Members {
			want[m.Name] = true
			walk(m.Value)
		}
	}
	walk(root)
	return want
}

func depth(n *jsonoracle.Node) int {
	d := 0
	for _, e := range n.Elems {
		d = max(d, depth(e))
	}
	for _, m := range n.Members {
		d = max(d, depth(m.Value))
	}
	if n.Kind == jsonoracle.Array || n.Kind == jsonoracle.Object {
		d++
	}
	return d
}

func sortedKeysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// oIndex reads a line number the oracle's way: decimal digits only, at
// most nine.
func oIndex(name string) (int, bool) {
	if name == "" || len(name) > 9 || strings.Trim(name, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(name)
	return n, err == nil
}
