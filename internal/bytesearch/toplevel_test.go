package bytesearch

import (
	"bytes"
	"strings"
	"testing"
)

// indentedDump is a clean dump.json laid out as json.dump(indent) writes
// it, with the given members of the top-level object after "task" (each
// "name": value, value written at the given indentation).
func indentedDump(indent int, members ...string) string {
	in := strings.Repeat(" ", indent)
	return "{\n" + in + `"task": "statistics",` + "\n" + strings.Join(members, ",\n") + "\n}\n"
}

// indentedData is a "data" member of two finite entries at the given
// indentation.
func indentedData(indent int, op string) string {
	in := func(n int) string { return "\n" + strings.Repeat(" ", n*indent) }
	entry := func(name string) string {
		return in(2) + `"` + name + `": {` + in(3) + `"output": [` + in(4) + "{" +
			in(5) + `"type": "torch.Tensor",` + in(5) + `"dtype": "torch.float32",` + in(5) + `"Max": 1.5,` +
			in(5) + `"Min": -1.5` + in(4) + "}" + in(3) + "]" + in(2) + "}"
	}
	return strings.TrimPrefix(in(1), "\n") + `"data": {` + entry(op+".0.forward") + "," + entry(op+".1.forward") + in(1) + "}"
}

// A file the byte search clears is not parsed, so it must exclude what
// would make the Reader stop early: a second "data" member (damage, README
// §5), or any member after "data", which msprobe writes last. Every window
// length gives the same answer.
func TestPrefilterWholeHasOneDataMemberLast(t *testing.T) {
	for _, indent := range []int{1, 4} {
		in := strings.Repeat(" ", indent)
		data := indentedData(indent, "Torch.add")
		for _, c := range []struct {
			name  string
			doc   string
			whole bool
		}{
			{"msprobe", indentedDump(indent, data), true},
			{"a second, empty data member on one line", indentedDump(indent, data, ` "data": {}`), false},
			{"a second, empty data member at the indentation", indentedDump(indent, data, in+`"data": {}`), false},
			{"a second data member with entries", indentedDump(indent, data, indentedData(indent, "Torch.mul")), false},
			{"the same data member twice", indentedDump(indent, data, data), false},
			{"data: null, then data", indentedDump(indent, in+`"data": null`, data), false},
			{"a member after data", indentedDump(indent, data, in+`"level": "mix"`), false},
			{"an object member after data", indentedDump(indent, data, strings.Replace(indentedData(indent, "Torch.mul"), `"data"`, `"extra"`, 1)), false},
			{"a member before data", indentedDump(indent, in+`"level": "mix"`, data), true},
		} {
			doc := []byte(c.doc)
			for w := 1; w <= len(doc); w++ {
				h, err := NewPrefilter(w, 64, testSearch).Scan(bytes.NewReader(doc))
				if err != nil {
					t.Fatal(err)
				}
				if h.Whole != c.whole || h.Clear() != c.whole {
					t.Fatalf("indent %d, %s, window %d: whole %v, clear %v, want %v\n%s", indent, c.name, w, h.Whole, h.Clear(), c.whole, doc)
				}
			}
		}
	}
}
