package repro

import (
	"fmt"
	"io"
	"strconv"

	"github.com/nanhunt/nanhunt/internal/safeio"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// Argument is a value passed to the recorded call, with its position.
type Argument struct {
	Field string // "input_args" or "input_kwargs"
	Index int    // position in input_args; -1 for a keyword argument
	Key   string // keyword name in input_kwargs
	Value Value
}

// Position names the argument as case.json and repro.py do:
// "input_args.1", "input_kwargs.dim".
func (a Argument) Position() string {
	if a.Index >= 0 {
		return a.Field + "." + strconv.Itoa(a.Index)
	}
	return a.Field + "." + a.Key
}

// entryData is one dump.json entry, decoded.
type entryData struct {
	Name    string
	Args    []Argument // input_args in order, then input_kwargs
	Output  []Value    // the output field (a list); a backward entry's gradients of the forward inputs
	Tensors []*TensorRef
}

// tensorsOf returns the tensors of a field, in file order.
func (e *entryData) tensorsOf(fields ...string) []*TensorRef {
	var out []*TensorRef
	for _, t := range e.Tensors {
		for _, f := range fields {
			if t.Field == f {
				out = append(out, t)
			}
		}
	}
	return out
}

// dumpFile is what was read of one dump.json.
type dumpFile struct {
	Path    string
	Header  dump.Header
	Entries map[string]*entryData // the wanted entries that were found
	Similar []string              // entry names of the same API, for error messages
}

// maxSimilar bounds the names kept for "did you mean" messages.
const maxSimilar = 8

// readEntries streams a dump.json and decodes the wanted entries. Other
// entries are skipped unparsed, and reading stops once the wanted entries
// are found: damage after them goes unseen, damage before them is an error.
func readEntries(path string, want []string, api string) (*dumpFile, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	df := &dumpFile{Path: path, Entries: map[string]*entryData{}}
	r := dump.NewReader(f, dump.ReaderOptions{Select: func(name string, _ int64) bool {
		if !wanted[name] && len(df.Similar) < maxSimilar && api != "" && dump.ParseName(name).Op() == api {
			df.Similar = append(df.Similar, name)
		}
		return wanted[name]
	}})
	for r.Next() {
		e := r.Entry()
		if e.Skipped || df.Entries[e.Name] != nil {
			continue
		}
		raw := r.Raw()
		if raw == nil {
			raw = make([]byte, e.End-e.Offset)
			if _, err := f.ReadAt(raw, e.Offset); err != nil && err != io.EOF {
				return nil, fmt.Errorf("%s: read entry %q at offset %d: %w", path, e.Name, e.Offset, err)
			}
		}
		ed, err := decodeEntry(raw, e.Offset)
		if err != nil {
			return nil, fmt.Errorf("%s: entry %q: %w", path, e.Name, err)
		}
		df.Entries[e.Name] = ed
		if len(df.Entries) == len(wanted) {
			break
		}
	}
	df.Header = r.Header()
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w (the entry may lie after the damage)", path, err)
	}
	return df, nil
}

// decodeEntry decodes the bytes of one entry, from its name to the end of
// its value, which start at the given offset of the file.
func decodeEntry(raw []byte, offset int64) (*entryData, error) {
	doc := make([]byte, 0, len(raw)+2)
	doc = append(append(append(doc, '{'), raw...), '}')
	root, err := decodeTree(doc, offset-1)
	if err != nil {
		return nil, err
	}
	if len(root.Members) != 1 {
		return nil, fmt.Errorf("offset %d: not one entry", offset)
	}
	m := root.Members[0]
	ed := &entryData{Name: m.Name}
	if m.Value.Kind != jsonlex.ObjectStart {
		return nil, fmt.Errorf("offset %d: the entry is %v, want an object", m.Value.Offset, m.Value.Kind)
	}
	for _, f := range m.Value.Members {
		switch f.Name {
		case "input_args":
			for i, n := range asList(f.Value) {
				ed.Args = append(ed.Args, Argument{Field: f.Name, Index: i, Value: ed.decode(n, f.Name, strconv.Itoa(i))})
			}
		case "input_kwargs":
			if f.Value.Kind == jsonlex.ObjectStart {
				for _, kw := range f.Value.Members {
					ed.Args = append(ed.Args, Argument{Field: f.Name, Index: -1, Key: kw.Name, Value: ed.decode(kw.Value, f.Name, kw.Name)})
				}
			}
		case "input": // a backward entry's gradients of the forward outputs: tensors only matter
			for i, n := range asList(f.Value) {
				ed.decode(n, f.Name, strconv.Itoa(i))
			}
		case "output":
			for i, n := range asList(f.Value) {
				ed.Output = append(ed.Output, ed.decode(n, f.Name, strconv.Itoa(i)))
			}
		}
	}
	return ed, nil
}

// asList returns an array's elements, or the value itself as the only one.
func asList(n *node) []*node {
	switch n.Kind {
	case jsonlex.ArrayStart:
		return n.Elems
	case jsonlex.Null:
		return nil
	}
	return []*node{n}
}

// decode decodes a top-level value of a field, filing its tensors.
func (e *entryData) decode(n *node, field, slot string) Value {
	var ts []*TensorRef
	v := decodeValue(n, slot, &ts)
	for _, t := range ts {
		t.Entry, t.Field = e.Name, field
	}
	e.Tensors = append(e.Tensors, ts...)
	return v
}
