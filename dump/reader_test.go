package dump

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/nanhunt/nanhunt/internal/fixturedir"

	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// sharedDir is the fixtures folder next to the repository (CI has it there).
func sharedDir(t testing.TB) string { return fixturedir.Dir(t) }

// readAll reads every entry the Reader yields.
func readAll(r io.Reader, details bool, window int) ([]oEntry, Header, error) {
	rd := NewReader(r, ReaderOptions{Details: details, WindowSize: window})
	var out []oEntry
	for rd.Next() {
		out = append(out, fromReader(rd.Entry(), details))
	}
	return out, rd.Header(), rd.Err()
}

// compareWithOracle checks the Reader against the oracle on one input.
func compareWithOracle(t *testing.T, data []byte, window int) {
	t.Helper()
	for _, details := range []bool{false, true} {
		got, _, err := readAll(bytes.NewReader(data), details, window)
		root, oerr := jsonoracle.Decode(data)
		if errors.Is(oerr, jsonoracle.ErrMarker) || (oerr == nil && !utf8.Valid(data)) {
			return // the oracle rewrites invalid UTF-8; the reader keeps bytes as they are
		}
		if oerr != nil {
			if err == nil {
				t.Fatalf("reader accepted input the strict decoder rejects (%v)", oerr)
			}
			return
		}
		want, ok := oracleEntries(root, details)
		if !ok {
			if err == nil {
				t.Fatalf("reader accepted a document without a \"data\" object")
			}
			return
		}
		if err != nil {
			if strings.Contains(err.Error(), "nesting") || strings.Contains(err.Error(), "deep") {
				return // the reader bounds nesting on purpose
			}
			t.Fatalf("reader failed on valid input: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("details=%v entry %d:\n got %+v\nwant %+v", details, i, got[i], want[i])
				}
			}
			t.Fatalf("details=%v: %d entries, oracle %d", details, len(got), len(want))
		}
	}
}

func dumpFiles(t *testing.T) []string { return fixturedir.DumpFiles(t) }

func TestReaderMatchesOracleOnRealDumps(t *testing.T) {
	files := dumpFiles(t)
	for i, f := range files {
		if testing.Short() && i%7 != 0 {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(sharedDir(t), f)
		t.Run(rel, func(t *testing.T) {
			compareWithOracle(t, data, 0)
			if i%5 == 0 {
				compareWithOracle(t, data, 37) // tokens across window edges
			}
		})
	}
}

func TestReaderRealDumpFacts(t *testing.T) {
	dir := sharedDir(t)
	f, err := os.Open(filepath.Join(dir, "msprobe-generated/bwd-sqrt-zero-rank2-step5/L1/step5/rank2/dump.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := NewReader(f, ReaderOptions{})
	var names []string
	var sqrtOut Class
	for rd.Next() {
		e := rd.Entry()
		names = append(names, e.Name)
		if e.Name == "Torch.sqrt.0.backward" {
			for _, t := range e.Tensors {
				if t.Field == Output {
					sqrtOut |= holds(&t)
				}
			}
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if h := rd.Header(); h.Task != "statistics" || h.Level != "L1" || h.Framework != "pytorch" {
		t.Errorf("header = %+v", h)
	}
	if len(names) != 183 || names[0] != "Torch.log.0.forward" || names[77] != "Torch.sqrt.0.backward" {
		t.Errorf("got %d entries, [0]=%q [77]=%q; want 183 entries in file order", len(names), names[0], names[77])
	}
	if sqrtOut != PosInf {
		t.Errorf("Torch.sqrt.0.backward output class = %v, want +inf", sqrtOut)
	}
}

func TestReaderTruncated(t *testing.T) {
	dir := sharedDir(t)
	data, err := os.ReadFile(filepath.Join(dir, "msprobe-real/megatron-npu-mix-v1stack/dump.json"))
	if err != nil {
		t.Fatal(err)
	}
	full, _, err := readAll(bytes.NewReader(data), false, 0)
	if err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut < len(data); cut += 97 {
		got, _, err := readAll(bytes.NewReader(data[:cut]), false, 64)
		var fe *FormatError
		if !errors.As(err, &fe) || !fe.Truncated() {
			t.Fatalf("cut at %d: err = %v, want a truncation FormatError", cut, err)
		}
		if fe.Offset > int64(cut) || fe.Offset < 0 {
			t.Fatalf("cut at %d: offset %d out of range", cut, fe.Offset)
		}
		if len(got) > len(full) || (len(got) > 0 && !reflect.DeepEqual(got, full[:len(got)])) {
			t.Fatalf("cut at %d: entries before the damage differ from the full read", cut)
		}
		if !strings.Contains(err.Error(), "ends early") {
			t.Errorf("cut at %d: message %q does not say the file ends early", cut, err)
		}
	}
}

func TestReaderOneByteReader(t *testing.T) {
	dir := sharedDir(t)
	data, err := os.ReadFile(filepath.Join(dir, "msprobe-generated/fwd-log-neg-rank2-step5/mix/step5/rank2/dump.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := readAll(bytes.NewReader(data), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := readAll(iotest.OneByteReader(bytes.NewReader(data)), true, 0)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("OneByteReader: err=%v, equal=%v", err, reflect.DeepEqual(got, want))
	}
}

func TestReaderValues(t *testing.T) {
	doc := `{"task": "nan_check", "level": "L1", "dump_data_dir": null, "data": {
 "A.x.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2, 0], "Max": null, "Min": null, "Mean": null, "Norm": null}],
   "input_kwargs": {"value": {"type": "float", "value": -Infinity}, "dtype": {"type": "torch.dtype", "value": "torch.float16"}},
   "output": [{"type": "torch.Tensor", "Max": "nan", "Min": "NaN"}, {"type": "torch.Tensor", "Max": 1e309, "Min": -1.5}, [{"type": "torch.Tensor", "Max": "-Infinity", "Min": "-inf"}]], "is_nan": 1},
 "B.y.3.backward": {"input": [null, {"type": "torch.Tensor", "dtype": "torch.bool", "shape": [], "Max": true, "Min": false, "Mean": null, "Norm": null}], "output": [{"type": "torch.Tensor", "md5": "0x00ff"}], "is_nan": 0},
 "Distributed.batch_isend_irecv.0.forward": {"input_args": [[{"class_type": "torch.distributed.P2POp", "tensor": {"type": "torch.Tensor", "Max": NaN, "Min": NaN}, "op": "isend", "peer": 3, "tag": 0}]],
   "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [2, 3], "group_id": "abcd"}}},
 "Distributed.all_reduce.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1.0, "Min": 0.0}], "input_kwargs": {"group": null}, "output": [{"type": "torch.Tensor", "Max": 2.0, "Min": 0.0}, null]},
 "Module.fc.Linear.parameters_grad.0": {"weight": [{"type": "torch.Tensor", "Max": Infinity, "Min": 0.5}], "bias": [{"type": "torch.Tensor", "Max": 1, "Min": -1}]}
}}`
	rd := NewReader(strings.NewReader(doc), ReaderOptions{Details: true})
	var es []Entry
	for rd.Next() {
		e := *rd.Entry()
		e.Tensors = append([]Tensor(nil), e.Tensors...)
		e.Args = append([]Arg(nil), e.Args...)
		es = append(es, e)
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if rd.Header().Task != "nan_check" || len(es) != 5 {
		t.Fatalf("header %+v, %d entries", rd.Header(), len(es))
	}
	a := es[0]
	if a.IsNaN != 1 || !a.Tensors[0].Empty || a.Tensors[0].HasStats() || a.Tensors[0].Dtype != "torch.float16" {
		t.Errorf("entry A: %+v", a)
	}
	wantOut := []Class{NaN, PosInf, NegInf}
	var gotOut []Class
	for _, tt := range a.Tensors {
		if tt.Field == Output {
			gotOut = append(gotOut, holds(&tt))
		}
	}
	if !reflect.DeepEqual(gotOut, wantOut) {
		t.Errorf("output classes %v, want %v", gotOut, wantOut)
	}
	if a.Tensors[3].Slot != "2.0" || a.Tensors[3].Arg != 2 {
		t.Errorf("nested slot = %q arg %d", a.Tensors[3].Slot, a.Tensors[3].Arg)
	}
	var neg bool
	for _, x := range a.Args {
		if x.Key == "value" && x.Num.Class == NegInf && x.Field == InputKwargs {
			neg = true
		}
		if x.Key == "dtype" && x.Str != "torch.float16" {
			t.Errorf("dtype kwarg = %+v", x)
		}
	}
	if !neg {
		t.Errorf("-inf constant argument not seen: %+v", a.Args)
	}
	b := es[1]
	if b.IsNaN != 0 || b.Tensors[0].Max.Kind != StatBool || b.Tensors[0].Max.Value != 1 || !b.Tensors[1].Checksum || b.Tensors[1].HasStats() {
		t.Errorf("entry B: %+v", b)
	}
	p := es[2]
	if len(p.Args) != 2 || p.Args[0].Op != "isend" || p.Args[0].Peer != 3 || p.Args[0].Tensor != 0 || holds(&p.Tensors[0]) != NaN {
		t.Errorf("P2POp: %+v %+v", p.Args, p.Tensors)
	}
	if g := p.Args[1]; g.GroupID != "abcd" || !reflect.DeepEqual(g.GroupRanks, []int{2, 3}) || g.Key != "group" {
		t.Errorf("group: %+v", g)
	}
	if ar := es[3]; len(ar.Args) != 1 || !ar.Args[0].Null || ar.Args[0].Key != "group" {
		t.Errorf("null group: %+v", ar.Args)
	}
	pg := es[4]
	if len(pg.Tensors) != 2 || pg.Tensors[0].Field != ParamGrads || pg.Tensors[0].Key != "weight" || holds(&pg.Tensors[0]) != PosInf || pg.Tensors[1].Key != "bias" {
		t.Errorf("parameters_grad: %+v", pg.Tensors)
	}
}

func TestReaderDamage(t *testing.T) {
	tests := []struct {
		name, doc string
		entries   int
		offset    int64
		truncated bool
	}{
		{"garbage", "hello", 0, 0, false},
		{"empty", "", 0, 0, true},
		{"not an object", `[1, 2]`, 0, 0, false},
		{"data is a list", `{"data": [1]}`, 0, 9, false},
		{"bad token in second entry", `{"data": {"a.b.0.forward": {}, "c.d.0.forward": {"output": [x]}}}`, 1, 60, false},
		{"cut mid entry", `{"data": {"a.b.0.forward": {}, "c.d.0.forward": {"output": [{"Max": 1.`, 1, 70, true},
		{"trailing junk", `{"data": {}} }`, 0, 13, false},
		{"deep", `{"data": {"a.b.0.forward": {"output": ` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}}`, 0, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := readAll(strings.NewReader(tt.doc), false, 0)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a FormatError", err)
			}
			if len(got) != tt.entries || fe.Truncated() != tt.truncated || (tt.offset >= 0 && fe.Offset != tt.offset) {
				t.Errorf("entries %d (want %d), truncated %v, offset %d (want %d): %v", len(got), tt.entries, fe.Truncated(), fe.Offset, tt.offset, err)
			}
		})
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"task": "statistics", "data": {"Torch.log.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 8], "Max": 1.5, "Min": -0.75, "Mean": 0.1, "Norm": 3.0, "requires_grad": false}], "input_kwargs": {}, "output": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN, "Mean": NaN, "Norm": NaN}]}}}`))
	f.Add([]byte(`{"data": {"Module.a.B.parameters_grad.0": {"w": [{"Max": Infinity, "Min": -Infinity}]}, "x.y.1.backward": {"input": [null], "output": [{"type": "torch.Tensor", "Max": "inf", "Min": "-inf", "md5": "00"}], "is_nan": 1}}}`))
	f.Add([]byte(`{"data": {"Distributed.isend.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1e309, "Min": 0}, {"type": "int", "value": 1}], "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "x"}}, "output": [{"class_type": "P2POp", "tensor": {"Max": -1e400, "Min": 0}, "op": "isend", "peer": 2}]}}, "framework": "pytorch"}`))
	f.Add([]byte(`{"data": {"a.b.0.forward": {"input_kwargs": {"value": {"type": "float", "value": -Infinity}, "x": {"k": [{"type": "T", "shape": [0], "Max": null}]}}}}}`))
	f.Add([]byte(`{"data": {"a.b.0.forward": {"output": [{"type": "torch.Tensor", "shape": [2], "Max": 1, "shape": [3, 4], "Min": 0}]}}}`)) // a shape twice: the last
	f.Add([]byte("{\"data\": {\"e\\u0041.b.0.forward\": {\"output\": [{\"type\": \"torch.Tensor\", \"Max\": \"\\u006Ean\", \"Min\": 0}]}}}"))
	if root, err := fixturedir.Root(); err == nil {
		dir := filepath.Join(root, "msprobe-real", "mix-no-framework-key", "dump.json")
		if data, err := os.ReadFile(dir); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareWithOracle(t, data, 0)
		compareWithOracle(t, data, 7)
	})
}

func TestSelect(t *testing.T) {
	dir := sharedDir(t)
	file := filepath.Join(dir, "msprobe-generated/bwd-sqrt-zero-rank2-step5/mix/step5/rank2/dump.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	type rng struct{ off, end int64 }
	var full []oEntry
	var ranges []rng
	r := NewReader(bytes.NewReader(data), ReaderOptions{Details: true})
	for r.Next() {
		full = append(full, fromReader(r.Entry(), true))
		ranges = append(ranges, rng{r.Entry().Offset, r.Entry().End})
	}
	// Skipping every other entry keeps names, indexes and ranges.
	sel := NewReader(bytes.NewReader(data), ReaderOptions{Select: func(name string, off int64) bool { return len(name)%2 == 0 }})
	i := 0
	for sel.Next() {
		e := sel.Entry()
		if e.Name != full[i].Name || e.Index != i || e.Offset != ranges[i].off || e.End != ranges[i].end || e.Skipped != (len(e.Name)%2 != 0) {
			t.Fatalf("entry %d: %q [%d,%d) skipped %v; want %q [%d,%d)", i, e.Name, e.Offset, e.End, e.Skipped, full[i].Name, ranges[i].off, ranges[i].end)
		}
		if e.Skipped && (len(e.Tensors) > 0 || len(e.Args) > 0) {
			t.Fatalf("a skipped entry has content")
		}
		i++
	}
	if sel.Err() != nil || i != len(full) {
		t.Fatalf("%v after %d entries", sel.Err(), i)
	}
}

func TestReaderLenientStatistics(t *testing.T) {
	doc := `{"data": {
 "Torch.x.0.forward": {"input_args": [null, {"type": "torch.Tensor", "max": "0.5", "min": "-1e2"}, null], "input_kwargs": {"src": {"type": "int", "value": 1}, "group": null},
   "output": [{"type": "torch.Tensor", "MAX": "NaN", "Min": "+1.5"}, {"type": "torch.Tensor", "Max": "1e400", "Min": "0"}], "is_recompute": true},
 "Torch.y.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1.0, "Min": "abc"}]}
}}`
	rd := NewReader(strings.NewReader(doc), ReaderOptions{Details: true})
	if !rd.Next() {
		t.Fatal(rd.Err())
	}
	e := rd.Entry()
	if e.NumArgs != 3 || !reflect.DeepEqual(e.Kwargs, []string{"src", "group"}) || !e.Recompute || !e.OddStatKeys {
		t.Errorf("facts: args %d kwargs %v recompute %v odd %v", e.NumArgs, e.Kwargs, e.Recompute, e.OddStatKeys)
	}
	got := []Class{}
	for _, tt := range e.Tensors {
		if !tt.HasStats() {
			t.Errorf("%s.%s: no statistics read", tt.Field, tt.Slot)
		}
		got = append(got, holds(&tt))
	}
	if want := []Class{0, NaN, PosInf}; !reflect.DeepEqual(got, want) {
		t.Errorf("classes %v, want %v", got, want)
	}
	if v := e.Tensors[0].Min.Value; v != -100 {
		t.Errorf("numeric string min = %v, want -100", v)
	}
	if !rd.Next() {
		t.Fatal(rd.Err())
	}
	if e := rd.Entry(); e.OddStatKeys || e.Tensors[0].Min.Kind != StatString || e.Recompute || e.NumArgs != 1 {
		t.Errorf("second entry: %+v", e)
	}
}

// A duplicated "data" member is damage at its offset, after the entries of
// the first (json.load would keep the last one: which was meant cannot be
// told).
func TestReaderDuplicatedData(t *testing.T) {
	doc := `{"task": "statistics", "data": {"Torch.x.0.forward": {"output": []}}, "data": {}}`
	rd := NewReader(strings.NewReader(doc), ReaderOptions{})
	n := 0
	for rd.Next() {
		n++
	}
	var fe *FormatError
	if n != 1 || !errors.As(rd.Err(), &fe) || fe.Offset != int64(strings.LastIndex(doc, `"data"`)) || !strings.Contains(fe.Error(), "second \"data\"") {
		t.Errorf("%d entries, err %v", n, rd.Err())
	}
}

// TestReaderKeyedByIndex reads the entry form the nan-overflow-detection
// skill documents: a positional field written as an object keyed by
// position, statistics as strings. Its members are the list's items; a
// keyword argument named "1" stays a keyword.
func TestReaderKeyedByIndex(t *testing.T) {
	doc := `{"framework": "pytorch", "data": {
  "Distributed.all_reduce_0_0": {"input_args": {"0": {"type": "torch.Tensor", "Max": "1.5", "Min": "-2"}, "2": {"type": "int", "value": 0}},
    "input_kwargs": {"1": {"type": "torch.Tensor", "Max": "nan", "Min": "nan"}},
    "output": {"1": {"Max": "inf", "Min": "0.5"}, "0": {"Max": "0.1", "Min": "-inf"}}},
  "Torch.ops.aten.linear_0_0": {"input_args": [{"type": "torch.Tensor", "Max": "1", "Min": "0"}], "output": [{"Max": "1", "Min": "0"}]}
}}`
	compareWithOracle(t, []byte(doc), 0)
	rd := NewReader(strings.NewReader(doc), ReaderOptions{Details: true})
	if !rd.Next() {
		t.Fatal(rd.Err())
	}
	e := rd.Entry()
	if !e.KeyedByIndex || e.NumArgs != 3 {
		t.Errorf("keyed by index %v, args %d; want true, 3", e.KeyedByIndex, e.NumArgs)
	}
	type slot struct {
		field    Field
		arg      int
		key      string
		slot     string
		max, min Class
	}
	var got []slot
	for _, tt := range e.Tensors {
		if !tt.HasStats() {
			t.Errorf("%s.%s: statistics written as strings not read", tt.Field, tt.Slot)
		}
		got = append(got, slot{tt.Field, tt.Arg, tt.Key, tt.Slot, tt.Max.Class, tt.Min.Class})
	}
	want := []slot{
		{InputArgs, 0, "", "0", 0, 0},
		{InputKwargs, 0, "1", "1", NaN, NaN},
		{Output, 1, "", "1", PosInf, 0},
		{Output, 0, "", "0", 0, NegInf},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tensors\n%+v\nwant\n%+v", got, want)
	}
	if !rd.Next() {
		t.Fatal(rd.Err())
	}
	if e := rd.Entry(); e.KeyedByIndex {
		t.Errorf("%s: lists read as keyed by index", e.Name)
	}
}

// mayOverflow is never false for a literal that parses to infinity.
func TestMayOverflow(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	lits := []string{"1e400", "1e+400", "1E0400", "-1e309", "9.99e99", "1.7976931348623157e+308", "1e-400", "12345678901234567890e99"}
	for range 20000 {
		lit := fmt.Sprintf("%d.%de%s%d", r.IntN(100000), r.IntN(1000), []string{"", "+", "-"}[r.IntN(3)], r.IntN(1200))
		if r.IntN(3) == 0 {
			lit = strings.Replace(lit, "e", "e0", 1)
		}
		lits = append(lits, lit)
	}
	for _, lit := range lits {
		if len(lit) >= 24 {
			continue
		}
		v, _ := strconv.ParseFloat(lit, 64)
		if math.IsInf(v, 0) && !mayOverflow([]byte(lit)) {
			t.Errorf("%s is infinite, mayOverflow says no", lit)
		}
		if st := numberStat([]byte(lit), false); math.IsInf(v, 0) != (st.Class != 0) {
			t.Errorf("numberStat(%s) = %+v, the value is %v", lit, st, v)
		}
	}
}
