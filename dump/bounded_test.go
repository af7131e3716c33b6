package dump

import (
	"fmt"
	"strings"
	"testing"
)

// firstEntry reads the first entry of a dump.json made of the given
// entry members.
func firstEntry(t *testing.T, members string, details bool) Entry {
	t.Helper()
	r := NewReader(strings.NewReader(`{"task": "statistics", "data": {"Torch.sqrt.0.forward": {`+members+`}}}`), ReaderOptions{Details: details, WindowSize: 4096})
	if !r.Next() {
		t.Fatalf("no entry: %v", r.Err())
	}
	e := *r.Entry()
	e.Tensors = append([]Tensor(nil), e.Tensors...)
	return e
}

func tensors(n int, max string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": %s, "Min": 0.5}`, max)
	}
	return b.String()
}

// Past maxKept, tensors merge by field and non-finite statistics: memory
// stays flat and no non-finite value is lost.
func TestMergedTensors(t *testing.T) {
	n := maxKept + 5000
	e := firstEntry(t, `"input_args": [`+tensors(n, "1.0")+`, `+tensors(3, "NaN")+`], "output": [`+tensors(2, "Infinity")+`]`, true)
	if want := 5000 + 3 + 2; e.Merged != want { // the bound is the entry's, outputs included
		t.Errorf("Merged = %d, want %d", e.Merged, want)
	}
	var nanIn, infOut, inputs int
	for _, ts := range e.Tensors {
		switch {
		case ts.Field == InputArgs && ts.Max.Class == NaN:
			nanIn++
		case ts.Field == Output && ts.Max.Class == PosInf:
			infOut++
		case ts.Field == InputArgs:
			inputs++
		}
	}
	if nanIn != 1 || infOut != 1 || inputs != maxKept+1 {
		t.Errorf("kept %d NaN input summaries, %d Inf outputs, %d finite inputs; want 1, 1, %d", nanIn, infOut, inputs, maxKept+1)
	}
	if len(e.Tensors) > maxKept+8 {
		t.Errorf("%d tensors kept, want at most %d", len(e.Tensors), maxKept+8)
	}
}

// A string value longer than the reader keeps is cut, counted, and the
// entry read on; a name that long is damage.
func TestCutStrings(t *testing.T) {
	long := strings.Repeat("x", maxString+10)
	e := firstEntry(t, `"input_kwargs": {"note": {"type": "str", "value": "`+long+`"}}, "output": [`+tensors(1, "NaN")+`]`, true)
	if e.CutStrings != 1 || len(e.Tensors) != 1 || e.Tensors[0].Max.Class != NaN {
		t.Errorf("CutStrings %d, tensors %+v", e.CutStrings, e.Tensors)
	}
	r := NewReader(strings.NewReader(`{"data": {"`+long+`": {}}}`), ReaderOptions{})
	if r.Next() || r.Err() == nil {
		t.Errorf("a name of %d bytes was read", len(long))
	}
}

// Statistics that are no statistic and members written twice are facts
// of the entry.
func TestOddStatsAndDuplicates(t *testing.T) {
	tests := []struct {
		name, members string
		odd           int
		dup           string
	}{
		{"clean", `"input_args": [` + tensors(1, "1.0") + `], "output": [` + tensors(1, "NaN") + `]`, 0, ""},
		{"object", `"input_args": [` + tensors(1, `{"v": 1}`) + `]`, 1, ""},
		{"list", `"input_args": [` + tensors(1, `[1, 2]`) + `]`, 1, ""},
		{"word", `"input_args": [` + tensors(1, `"big"`) + `]`, 1, ""},
		{"numeric string", `"input_args": [` + tensors(1, `"0.5"`) + `]`, 0, ""},
		{"bool", `"input_args": [` + tensors(1, `true`) + `]`, 0, ""},
		{"output twice", `"output": [], "output": []`, 0, "output"},
		{"Max twice", `"output": [{"type": "torch.Tensor", "Max": 1, "Max": NaN, "Min": 0}]`, 0, "Max"},
		{"is_nan twice", `"is_nan": 1, "is_nan": 0`, 0, "is_nan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := firstEntry(t, tt.members, false)
			if e.OddStats != tt.odd || e.DuplicateKey != tt.dup {
				t.Errorf("OddStats %d, DuplicateKey %q; want %d, %q", e.OddStats, e.DuplicateKey, tt.odd, tt.dup)
			}
		})
	}
}
