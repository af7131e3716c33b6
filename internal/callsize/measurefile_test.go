package callsize

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/bytesearch"
	"github.com/nanhunt/nanhunt/internal/fixturedir"
)

// opsIn lists the ops of a document's entries, sorted.
func opsIn(data []byte) []string {
	set := map[string]bool{}
	r := dump.NewReader(bytes.NewReader(data), dump.ReaderOptions{Select: func(string, int64) bool { return false }})
	for r.Next() {
		set[dump.ParseName(r.Entry().Name).Op()] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// testWindows are the windows the search is tested through: MeasureFile's,
// and windows small enough that entries cross their edges (parsed from
// the window or read again).
var testWindows = []int{measureWindow, 4096, 300}

// checkMeasureFile holds MeasureFile to Measure on one document and
// list of ops, and reports whether the search served.
func checkMeasureFile(t *testing.T, name string, data []byte, ops []string) bool {
	t.Helper()
	want, werr := Measure(bytes.NewReader(data), ops)
	for _, window := range testWindows {
		got, gerr := measureFile(bytes.NewReader(data), int64(len(data)), ops, window)
		if (werr == nil) != (gerr == nil) || (werr == nil && !maps.Equal(got, want)) {
			t.Fatalf("%s, ops %q, windows of %d:\nMeasureFile  %v, %v\nMeasureCalls %v, %v", name, ops, window, got, gerr, want, werr)
		}
	}
	m := measureSearch{ra: bytes.NewReader(data), size: int64(len(data)), ops: ops, window: measureWindow}
	_, ok, _ := m.run()
	return ok
}

// On every real dump, each op alone and all together size the same
// through the search as through the reader.
func TestMeasureFileLikeMeasureCalls(t *testing.T) {
	searched := 0
	for _, f := range fixturedir.DumpFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ops := opsIn(data)
		lists := [][]string{ops, {"Torch.no_such_op"}, nil}
		step := max(1, len(ops)/25)
		for i := 0; i < len(ops); i += step {
			lists = append(lists, ops[i:i+1])
		}
		for _, l := range lists {
			if checkMeasureFile(t, f, data, l) && len(l) > 0 {
				searched++
			}
		}
	}
	if searched == 0 {
		t.Fatal("the search never served: every document was read by Measure")
	}
	t.Logf("%d lists of ops measured by the search", searched)
}

// measureDoc is a small json.dump(indent=1) document.
const measureDoc = `{
 "task": "statistics",
 "level": "L1",
 "data": {
  "Torch.exp.0.forward": {
   "input_args": [
    {
     "type": "torch.Tensor",
     "dtype": "torch.float16",
     "shape": [
      2,
      3
     ],
     "Max": 1.0,
     "Min": 0.0
    }
   ],
   "output": [
    {
     "type": "torch.Tensor",
     "dtype": "torch.float32",
     "shape": [
      2,
      3
     ],
     "Max": Infinity,
     "Min": 1.0
    }
   ]
  },
  "Torch.exp2.0.forward": {
   "input_args": [],
   "output": []
  },
  "Tensor.exp.0.forward": {
   "output": [
    {
     "type": "torch.Tensor",
     "dtype": "torch.bfloat16",
     "shape": [
      7
     ]
    }
   ]
  },
  "Torch.exp.1.backward": {
   "input": [
    {
     "type": "torch.Tensor",
     "dtype": "torch.float32",
     "shape": [
      5
     ],
     "Max": 1.0,
     "Min": 1.0
    }
   ]
  }
 }
}
`

// Documents of every other shape are read by Measure, with its
// result; the ones of the shape the search needs are searched.
func TestMeasureFileShapes(t *testing.T) {
	finite := strings.ReplaceAll(measureDoc, "Infinity", "1e9")
	var compact bytes.Buffer
	json.Compact(&compact, []byte(finite))
	tests := []struct {
		name     string
		doc      string
		searched bool
	}{
		{"indented", measureDoc, true},
		{"indent 4", reindented(t, finite, 4), true},
		{"indented unevenly", strings.ReplaceAll(measureDoc, "\n ", "\n    "), false},
		{"one line", compact.String(), false},
		{"a member after data", strings.TrimSuffix(measureDoc, "\n}\n") + ",\n \"after\": {\n  \"Torch.exp.9.forward\": {}\n }\n}\n", false},
		{"a second data", strings.TrimSuffix(measureDoc, "\n}\n") + ",\n \"data\": {\n  \"Torch.exp.9.forward\": {}\n }\n}\n", false},
		{"an escaped name", strings.Replace(measureDoc, `"Torch.exp.1.backward"`, `"Torch\u002eexp.1.backward"`, 1), false},
		{"cut", measureDoc[:len(measureDoc)/2], false},
		{"data empty", "{\n \"task\": \"statistics\",\n \"data\": {}\n}\n", false},
		{"an op's name in a string", strings.Replace(measureDoc, `"type": "torch.Tensor",`, `"type": "Torch.exp.5.forward",`, 1), true},
		{"no data", "{\n \"task\": \"statistics\"\n}\n", false},
	}
	for _, tt := range tests {
		for _, ops := range [][]string{{"Torch.exp"}, {"Tensor.exp", "Torch.exp2"}, {"Torch.exp", "Tensor.exp", "Torch.exp2"}} {
			if got := checkMeasureFile(t, tt.name, []byte(tt.doc), ops); got != tt.searched {
				t.Errorf("%s, %q: searched = %v, want %v", tt.name, ops, got, tt.searched)
			}
		}
	}
	// the sizes themselves, by hand: Torch.exp's two calls hold three
	// tensors of 6x2, 6x4 and 5x4 bytes
	got, err := MeasureFile(strings.NewReader(measureDoc), int64(len(measureDoc)), []string{"Torch.exp"})
	if err != nil || got["Torch.exp"].Calls != 2 || got["Torch.exp"].Tensors != 3 ||
		got["Torch.exp"].Bytes <= 12+24+20+3*torchSaveOverhead {
		t.Fatalf("Torch.exp: %+v, %v", got, err)
	}
}

// A document longer than the search's window: matches on either side of
// each window's edge, and an entry line cut by it.
func TestMeasureFileAcrossWindows(t *testing.T) {
	entry := "  \"Torch.exp.%d.forward\": {\n   \"output\": [\n    {\n     \"type\": \"torch.Tensor\",\n     \"dtype\": \"torch.float32\",\n     \"shape\": [\n      3\n     ],\n     \"Max\": 1.0,\n     \"Min\": 0.0\n    }\n   ]\n  }"
	var b strings.Builder
	b.WriteString("{\n \"task\": \"statistics\",\n \"data\": {\n")
	for i := 0; b.Len() < 3*measureWindow; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(strings.Replace(entry, "%d", strings.Repeat("1", 1+i%7), 1))
		if i%3 == 0 {
			b.WriteString(",\n  \"Torch.add." + strings.Repeat("2", 1+i%11) + ".forward\": {}")
		}
	}
	b.WriteString("\n }\n}\n")
	if !checkMeasureFile(t, "long", []byte(b.String()), []string{"Torch.exp"}) {
		t.Fatal("the long document was not searched")
	}
}

func FuzzMeasureFile(f *testing.F) {
	f.Add([]byte(measureDoc), "Torch.exp")
	f.Add([]byte(strings.ReplaceAll(measureDoc, "\n ", "\n  ")), "Tensor.exp")
	f.Add([]byte(reindented(f, strings.ReplaceAll(measureDoc, "Infinity", "1e9"), 3)), "Torch.exp2")
	f.Fuzz(func(t *testing.T, data []byte, op string) {
		ops := []string{op}
		for _, window := range testWindows {
			got, gerr := measureFile(bytes.NewReader(data), int64(len(data)), ops, window)
			if !jsonDumpForm(data) {
				continue // no panic is all that is asked
			}
			want, werr := Measure(bytes.NewReader(data), ops)
			if (werr == nil) != (gerr == nil) || (werr == nil && !maps.Equal(got, want)) {
				t.Fatalf("ops %q, windows of %d:\nMeasureFile  %v, %v\nMeasureCalls %v, %v", ops, window, got, gerr, want, werr)
			}
		}
	})
}

// finiteSpelled replaces the non-finite tokens msprobe writes with 0, for
// json.Valid.
func finiteSpelled(b []byte) []byte {
	for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
		b = bytes.ReplaceAll(b, []byte(tok), []byte("0"))
	}
	return b
}

// reindented is doc as json.dump(indent=n) writes it.
func reindented(t testing.TB, doc string, n int) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(doc), "", strings.Repeat(" ", n)); err != nil {
		t.Fatal(err)
	}
	return b.String() + "\n"
}

// jsonDumpForm reports whether b is a JSON document as json.dump(indent=N)
// writes it (the form in which MeasureFile's search is exact).
func jsonDumpForm(b []byte) bool {
	b = finiteSpelled(b)
	n := bytesearch.DocumentIndent(b)
	if n == 0 {
		return false
	}
	var out bytes.Buffer
	if json.Indent(&out, bytes.TrimSpace(b), "", strings.Repeat(" ", n)) != nil {
		return false
	}
	return bytes.Equal(out.Bytes(), bytes.TrimSpace(b))
}

// The search parses the entries its windows hold whole, and reads again
// only those that cross a window's edge: on real dumps through 4 kB
// windows, both kinds occur (and the sizes are Measure's: above).
func TestMeasureFileParsesInTheWindow(t *testing.T) {
	inWindow, again := 0, 0
	for _, f := range fixturedir.DumpFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := measureSearch{ra: bytes.NewReader(data), size: int64(len(data)), ops: opsIn(data), window: 4096}
		start, err := m.shape()
		if err != nil {
			continue
		}
		starts, parsed, err := m.entryStarts(start)
		if err != nil {
			continue
		}
		for _, off := range starts {
			if _, ok := parsed[off]; ok {
				inWindow++
			} else {
				again++
			}
		}
	}
	if inWindow == 0 || again == 0 {
		t.Errorf("%d entries parsed in their window, %d read again: want both", inWindow, again)
	}
	t.Logf("%d entries parsed in their window, %d read again", inWindow, again)
}
