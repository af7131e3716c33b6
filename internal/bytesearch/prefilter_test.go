package bytesearch

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"
)

// nonFinite reports whether the Reader sees a non-finite value in an entry
// that can count: a tensor's Max or Min, a number argument, a nan_check flag
// (a tensor's Mean and Norm never decide anything).
func nonFinite(e *dump.Entry) bool {
	if e.IsNaN == 1 {
		return true
	}
	for _, t := range e.Tensors {
		if holds(&t) != 0 {
			return true
		}
	}
	for _, a := range e.Args {
		if a.Num.Class != 0 {
			return true
		}
	}
	return false
}

// checkPrefilter: every entry in which the Reader sees a non-finite value
// holds a hit, so a cleared file holds none.
func checkPrefilter(t *testing.T, data []byte, window int) *Hits {
	t.Helper()
	p := NewPrefilter(window, 64, testSearch)
	h, err := p.Scan(iotest.HalfReader(bytes.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	r := dump.NewReader(bytes.NewReader(data), dump.ReaderOptions{})
	for r.Next() {
		e := r.Entry()
		if nonFinite(e) && !h.Within(e.Offset, e.End) {
			t.Fatalf("entry %q [%d, %d) holds a non-finite value but no hit (spans %v)", e.Name, e.Offset, e.End, h.Spans)
		}
	}
	// A cleared file is not parsed, so syntax errors in it go unseen; but a
	// file that simply stops (a crash during the write) is never cleared.
	var fe *dump.FormatError
	if errors.As(r.Err(), &fe) && fe.Truncated() && h.Clear() {
		t.Fatalf("a truncated file was cleared: %v", r.Err())
	}
	// NoBackward: exactly when a whole search met no backward needle and
	// had no reason to stop looking; then LastEntry finds nothing
	t0 := bytes.TrimLeft(data, " \t\r\n")
	searched := bytes.IndexByte(data, 0) < 0 && (len(t0) == 0 || t0[0] == '{')
	if want := searched && !hasNeedleScalar(data) && h.FirstSevere < 0 && h.Forward; h.NoBackward != want {
		t.Fatalf("NoBackward %v, want %v", h.NoBackward, want)
	}
	if h.NoBackward {
		for indent := 1; indent <= 4; indent++ {
			if last, err := LastEntry(bytes.NewReader(data), int64(len(data)), indent, isBackwardTest); err != nil || last != -1 {
				t.Fatalf("NoBackward, but LastEntry at indent %d finds %d (%v)", indent, last, err)
			}
		}
	}
	return h
}

func TestPrefilterSpellings(t *testing.T) {
	tests := []struct {
		doc   string
		clear bool
	}{
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1.5, "Min": -2e-05, "Mean": 1e+30, "Norm": 3.4028234663852886e+38}]}}}`, true},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 60000.0, "Min": -2.5, "Mean": 12.5, "Norm": Infinity}]}}}`, true}, // float16 norm
		{`{"data": {"a.b.0.forward": {"output": [{"Norm": Infinity, "Max": 1.0, "Min": 0}]}}}`, false},                     // no Max before it
		// a mask: the Norm after the Mean judged by the Max found for the Mean
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1.0, "Min": 0, "Mean": -Infinity, "Norm": Infinity}]}}}`, true},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1.0, "Mean": -Infinity}, {"Norm": Infinity, "Min": 0}]}}}`, false},                              // the Max of another tensor
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1.0, "Mean": -Infinity, "o": {"a": 1}, "Norm": Infinity}]}}}`, false},                           // a brace between
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1.0, "Mean": -Infinity, "o": {"a": 1}, "Max": 2, "Norm": Infinity}]}}}`, true},                  // a later Max
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1.0, "Mean": -Infinity, "p": "` + strings.Repeat("x", 360) + `", "Norm": Infinity}]}}}`, false}, // too far
		{`{"data": {"Torch.isnan.0.forward": {"output": [{"type": "torch.Tensor", "dtype": "torch.bool", "Max": true, "Min": false}]}, "Tensor.nan_to_num.0.forward": {}, "Torch.isinf.1.forward": {}}}`, true},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": NaN, "Min": NaN}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": Infinity, "Min": -Infinity}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1.0, "Min": -Infinity}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": "inf", "Min": 0}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": "-INFINITY", "Min": 0}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": "NaN", "Min": 0}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": "NAN", "Min": 0}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": "-NAN", "Min": 0}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": "+INF", "Min": 0}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": "nAN", "Min": 0}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": "\u006Ean", "Min": 0}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1e309, "Min": 0}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": -1E+400, "Min": 0}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1` + strings.Repeat("0", 310) + `.5, "Min": 0}]}}}`, true}, // not read as a number
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1` + strings.Repeat("0", 90) + `e220, "Min": 0}]}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1.0, "Min": 0}], "is_nan": 1}}}`, false},
		{`{"data": {"a.b.0.forward": {"input_kwargs": {"v": {"type": "float", "value": "-inf"}}}}}`, false},
		{`{"data": {"a.b.0.forward": {"output": [{"Max": 1.0, "Min": 0}]}`, false},                                             // cut: not whole
		{`{"data": {"a.b.0.forward": {"output": [{"type": "torch.Tensor", "dtype": "torch.float32", "md5": "0x0"}]}}}`, false}, // no statistics
	}
	for _, tt := range tests {
		// laid out as msprobe writes them: "data" on its own line, closed on
		// its own line, then the document's "}"
		if strings.HasSuffix(tt.doc, "}}}") {
			tt.doc = "{\n \"data\": {" + strings.TrimPrefix(tt.doc[:len(tt.doc)-2], `{"data": {`) + "\n }\n}"
		}
		h := checkPrefilter(t, []byte(tt.doc), 0)
		if h.Clear() != tt.clear {
			t.Errorf("Clear() = %v, want %v for %s", h.Clear(), tt.clear, tt.doc)
		}
		for _, w := range []int{1, 3, 7} {
			if h2 := checkPrefilter(t, []byte(tt.doc), w); h2.Clear() != tt.clear {
				t.Errorf("window %d: Clear() = %v, want %v for %s", w, h2.Clear(), tt.clear, tt.doc)
			}
		}
	}
}

func TestPrefilterRealDumps(t *testing.T) {
	cleared, flagged := 0, 0
	for _, f := range fixturedir.DumpFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h := checkPrefilter(t, data, 4096)
		if h.Clear() {
			cleared++
		} else {
			flagged++
		}
		// the clean steps of the generated scenarios are cleared
		if strings.Contains(f, "msprobe-generated") && strings.Contains(f, string(filepath.Separator)+"step4"+string(filepath.Separator)) && !h.Clear() {
			t.Errorf("%s: a clean step was not cleared (spans %v)", f, h.Spans)
		}
	}
	if cleared == 0 || flagged == 0 {
		t.Errorf("cleared %d, flagged %d: want both", cleared, flagged)
	}
}

func FuzzPrefilter(f *testing.F) {
	for _, s := range []string{
		`{"data": {"a.b.0.forward": {"output": [{"Max": NaN, "Min": NaN}]}}}`,
		`{"data": {"a.b.0.forward": {"output": [{"Max": "\u0049nf", "Min": 1e300}]}}}`,
		`{"data": {"a.b.0.forward": {"input_kwargs": {"v": {"type": "float", "value": -1e999}}, "is_nan": 0}}}`,
		`{"data": {"x": {"output": [{"Max": 12345678901234567890123456789e280, "Min": "Nan"}]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPrefilter(t, data, 0)
		checkPrefilter(t, data, 5)
	})
}

func TestPrefilterFirstSevere(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want int64 // -1: only -inf
	}{
		{`{"a": [{"Max": 1.0, "Min": -Infinity}, {"Min": "-inf"}, {"Min": -1e300}]}`, -1},
		{`{"a": [{"Max": 1.0, "Min": -Infinity}, {"Max": Infinity}]}`, 47},
		{`{"a": [{"Max": NaN, "Min": -Infinity}]}`, 15},
		{`{"a": [{"Max": "INF", "Min": -Infinity}]}`, 15},
	} {
		h, err := NewPrefilter(0, 0, testSearch).Scan(strings.NewReader(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		if h.FirstSevere != tt.want {
			t.Errorf("FirstSevere = %d, want %d for %s", h.FirstSevere, tt.want, tt.doc)
		}
	}
}

func TestPrefilterLocatesEntries(t *testing.T) {
	for _, f := range fixturedir.DumpFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{4096, 0} {
			h, err := NewPrefilter(w, 1<<16, testSearch).Scan(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if !h.Located || len(h.Spans) == 0 {
				continue
			}
			// Against the reader: Forward and LastEntry as the entries say,
			// up to the first entry outside a forward API call or holding
			// the first hit that may be NaN or +Inf (where placing stops)
			r := dump.NewReader(bytes.NewReader(data), dump.ReaderOptions{})
			forward, last := true, int64(-1)
			for r.Next() {
				e := r.Entry()
				if h.Within(e.Offset, e.End) {
					n := dump.ParseName(e.Name)
					forward = forward && n.Dir == notation.Forward && !n.Module && !n.IsDistributed()
					last = e.Offset
					if !forward || (h.FirstSevere >= e.Offset && h.FirstSevere < e.End) {
						break
					}
				}
			}
			if h.Forward != forward || h.LastEntry != last {
				t.Errorf("%s (window %d): Forward %v LastEntry %d; the reader says %v %d", f, w, h.Forward, h.LastEntry, forward, last)
			}
		}
		// The last backward entry, read from the end, is the reader's.
		h, _ := NewPrefilter(0, 0, testSearch).Scan(bytes.NewReader(data))
		if h.Indent == 0 {
			continue
		}
		want := int64(-1)
		r := dump.NewReader(bytes.NewReader(data), dump.ReaderOptions{})
		for r.Next() {
			if d := dump.ParseName(r.Entry().Name).Dir; d == notation.Backward || d == notation.ParamGrad {
				want = r.Entry().Offset
			}
		}
		got, err := LastEntry(bytes.NewReader(data), int64(len(data)), h.Indent, func(name []byte) bool {
			d := dump.ParseName(string(name)).Dir
			return d == notation.Backward || d == notation.ParamGrad
		})
		if err != nil || got != want {
			t.Errorf("%s: LastEntry = %d, %v; want %d", f, got, err, want)
		}
	}
}

func TestForwardAPIOp(t *testing.T) {
	for _, name := range []string{
		"Torch.log.0.forward", "Tensor.__mul__.12.forward", "moe_ext.kernels.fused_attention.3.forward",
		"Torch.sqrt.0.backward", "Module.encoder.proj.Linear.forward.0", "Distributed.all_reduce.0.forward",
		"Module.fc.Linear.parameters_grad.0", "x.0.forward", "a.b.x.forward", "weird",
	} {
		n := dump.ParseName(name)
		wantOK := n.Dir == notation.Forward && !n.Module && !n.IsDistributed() && n.Prefix != ""
		op, ok := forwardAPIOp([]byte(name))
		if ok != wantOK || (ok && string(op) != n.Op()) {
			t.Errorf("forwardAPIOp(%q) = %q, %v; ParseName says %q, %v", name, op, ok, n.Op(), wantOK)
		}
	}
}

// testSearch is what the rule set (package policy, which imports dump)
// gives the byte search: a tensor's Mean and Norm are never suspects.
var testSearch = SearchRules{IgnoredStats: []string{"Mean", "Norm"}}

// holds is what Max and Min say of a tensor, as the rule set reads them.
func holds(t *dump.Tensor) dump.Class { return t.Max.Class | t.Min.Class }

// A file that cannot be a JSON document (a first byte other than '{', a
// NUL byte) is not searched to its end: a 50 GB sparse file of zeros is
// given up after one window.
func TestPrefilterGivesUpOnGarbage(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    io.Reader
	}{
		{"zeros", io.LimitReader(zeroReader{}, 50<<30)},
		{"a NUL after a good start", io.MultiReader(strings.NewReader("{\n \"data\": {\n"), io.LimitReader(zeroReader{}, 50<<30))},
		{"text", io.LimitReader(repeatReader('x'), 50<<30)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := &countingReader{r: tc.r}
			h, err := NewPrefilter(1<<20, 0, testSearch).Scan(cr)
			if err != nil {
				t.Fatal(err)
			}
			if h.Whole || cr.n > 4<<20 {
				t.Errorf("whole %v after reading %d bytes", h.Whole, cr.n)
			}
		})
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type repeatReader byte

func (c repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// A file whose length fills its last window exactly ends with a read of
// nothing: the bytes that window left to be judged with the next one (a
// suspect in its last contextLen bytes) are judged then. Every window
// length finds what one window over the whole file finds.
func TestPrefilterJudgesTheEndOfAFullLastWindow(t *testing.T) {
	pad := strings.Repeat(`    "Torch.mul.0.forward": {"output": []},`+"\n", 30)
	for _, min := range []string{"NaN", "-Infinity", `"inf"`, "1e400"} {
		doc := []byte("{\n  \"data\": {\n" + pad + "    \"Torch.add.0.forward\": {\n      \"output\": [\n        {\n" +
			"          \"type\": \"torch.Tensor\",\n          \"dtype\": \"torch.float32\",\n          \"Max\": 1.0,\n" +
			"          \"Min\": " + min + "\n        }\n      ]\n    }\n  }\n}\n")
		whole, err := NewPrefilter(len(doc), 64, testSearch).Scan(bytes.NewReader(doc))
		if err != nil || len(whole.Spans) != 1 {
			t.Fatalf("%s: one window over the file: spans %v, error %v", min, whole.Spans, err)
		}
		want := *whole
		want.Spans = slices.Clone(whole.Spans)
		for w := 1; w < len(doc); w++ {
			h, err := NewPrefilter(w, 64, testSearch).Scan(bytes.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(h.Spans, want.Spans) || h.FirstSevere != want.FirstSevere || h.Whole != want.Whole ||
				h.Located != want.Located || h.LastEntry != want.LastEntry {
				t.Fatalf("%s, window %d of a %d-byte file (last window full: %v): spans %v first severe %d, want %v %d",
					min, w, len(doc), (len(doc)-carryLen)%w == 0, h.Spans, h.FirstSevere, want.Spans, want.FirstSevere)
			}
		}
	}
}

// ScanUntilSevere stops after the window holding the first hit that may be
// NaN or +Inf: its spans are Scan's before Searched, its first severe hit
// Scan's; without such a hit it is Scan.
func TestScanUntilSevereIsScanUpToItsStop(t *testing.T) {
	partial := 0
	for _, f := range fixturedir.DumpFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{4096, 64 << 10} {
			whole, err := NewPrefilter(w, 1<<16, testSearch).Scan(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(whole.Spans)
			first, wholeDoc := whole.FirstSevere, whole.Whole
			h, err := NewPrefilter(w, 1<<16, testSearch).ScanUntilSevere(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if h.FirstSevere != first {
				t.Fatalf("%s (window %d): FirstSevere %d, Scan's %d", f, w, h.FirstSevere, first)
			}
			if !h.Partial {
				if !slices.Equal(h.Spans, want) || h.Whole != wholeDoc {
					t.Fatalf("%s (window %d): not partial, but spans %v differ from Scan's %v", f, w, h.Spans, want)
				}
				continue
			}
			partial++
			if first < 0 || h.Searched <= first || h.Whole || h.NoBackward {
				t.Fatalf("%s (window %d): partial with first severe %d, searched %d, whole %v, no backward %v",
					f, w, first, h.Searched, h.Whole, h.NoBackward)
			}
			var before []Span
			for _, sp := range want {
				if sp.From < h.Searched {
					before = append(before, Span{sp.From, min(sp.To, h.Searched-1)})
				}
			}
			var got []Span
			for _, sp := range h.Spans {
				got = append(got, Span{sp.From, min(sp.To, h.Searched-1)})
			}
			if !slices.Equal(got, before) {
				t.Fatalf("%s (window %d): spans before %d are %v, Scan's %v", f, w, h.Searched, got, before)
			}
		}
	}
	if partial == 0 {
		t.Fatal("no search stopped early")
	}
}

// The byte search's maxNumberLen is the longest literal the reader reads
// as a number: one of that length can overflow to +inf (and is a hit),
// one byte longer is read as no number at all.
func TestMaxNumberLenIsTheReaders(t *testing.T) {
	for _, tc := range []struct {
		digits int
		want   dump.Class
	}{{maxNumberLen - 4, nonfinite.PosInf}, {maxNumberLen - 3, 0}} {
		lit := strings.Repeat("1", tc.digits) + "e999"
		doc := `{"data": {"Torch.exp.0.forward": {"output": [{"type": "torch.Tensor", "Max": ` + lit + `, "Min": 0}]}}}`
		r := dump.NewReader(strings.NewReader(doc), dump.ReaderOptions{})
		if !r.Next() {
			t.Fatalf("%d bytes: no entry: %v", len(lit), r.Err())
		}
		if got := r.Entry().Tensors[0].Max.Class; got != tc.want {
			t.Errorf("a literal of %d bytes reads as %v, want %v", len(lit), got, tc.want)
		}
		h, err := NewPrefilter(0, 0, testSearch).Scan(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if tc.want != 0 && len(h.Spans) == 0 {
			t.Errorf("a literal of %d bytes that overflows is no hit", len(lit))
		}
	}
}
