package repro

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// FuzzReproDecodeValue compares the decoder of non-tensor values (jsonlex
// tree, decodeValue) with a reference decoding written from the format
// description over internal/jsonoracle's strict decoder, and checks that
// whatever the input, the Python that repro.py gets is one line of
// printable ASCII and case.json's form is valid JSON.
func FuzzReproDecodeValue(f *testing.F) {
	for _, tt := range decodeTests {
		f.Add([]byte(tt.in))
	}
	for _, s := range []string{
		`{"type": "int", "type": "float", "value": 1}`,
		`{"type": 3, "value": 1}`,
		`{"Max": NaN, "type": "x", "shape": [1, "a", 2.5], "shape": [3]}`,
		`{"class_type": "torch.distributed.P2POp", "Max": 1}`,
		`{"group_ranks": [1, 99999999999999999999, -2], "type": "torch.ProcessGroup"}`,
		`{"type": "slice", "value": [1, 2]}`,
		`{"type": "torch.Size", "value": [[1], {"a": 1}, NaN]}`,
		`{"a": {"b": {"c": [{"type": "torch.Tensor", "data_name": "x.pt"}]}}}`,
		`{"type": "torch.device", "value": 1.5}`,
		`{"type": "str", "value": "\ud800\udfff\u2028"}`,
		"{\"type\": \"str\", \"value\": \"\xff\xfe\"}",
		`[1e999, -1e999, 1E+2, -0, 0.1e-400]`,
		`{"type": "bool", "value": 0}`,
		`{"type": "memory_format", "format": "x\ny"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecode)
}

func checkDecode(t *testing.T, in []byte) {
	tree, err := decodeTree(in, 0)
	ref, rerr := jsonoracle.Decode(in)
	switch {
	case errors.Is(rerr, jsonoracle.ErrMarker):
		return
	case err != nil && rerr == nil:
		if strings.Contains(err.Error(), "nesting depth") {
			return // deeper than dump.json ever is; the reference has a higher limit
		}
		t.Fatalf("decoder rejects what the reference accepts: %v", err)
	case err == nil && rerr != nil:
		t.Fatalf("decoder accepts what the reference rejects: %v", rerr)
	case err != nil:
		return
	}
	var ts, rts []*TensorRef
	got := decodeValue(tree, "0", &ts)
	want := refValue(ref, "0", &rts)
	if g, w := describe(got), describe(want); g != w {
		t.Fatalf("decoded\n%s\nreference\n%s", g, w)
	}
	if len(ts) != len(rts) {
		t.Fatalf("%d tensors, reference %d", len(ts), len(rts))
	}
	for i, tr := range ts {
		tr.Var = "t" + strconv.Itoa(i)
	}
	py := got.Python()
	for i := 0; i < len(py); i++ {
		if py[i] < 0x20 || py[i] > 0x7e {
			t.Fatalf("python %q has byte %#x", py, py[i])
		}
	}
	js, err := json.Marshal(got)
	if err != nil || !json.Valid(js) {
		t.Fatalf("case.json form %s: %v", js, err)
	}
	_ = got.Note()
	checkScript(t, in)
}

// checkScript writes repro.py for a forward and a backward entry made of
// the input, and checks that it is printable ASCII whatever the input.
func checkScript(t *testing.T, in []byte) {
	for _, name := range []string{"Tensor.add_.0", "Torch.x.0", "my.mod.f.0", "Distributed.send.0"} {
		fwd, err := decodeEntry(append([]byte(`"`+name+`.forward":`), in...), 0)
		if err != nil {
			return // not an object
		}
		bwd, _ := decodeEntry(append([]byte(`"`+name+`.backward":`), in...), 0)
		for _, e := range []*entryData{fwd, bwd} {
			for _, tr := range e.Tensors {
				if tr.DataName == "" {
					tr.DataName = "x.pt"
				}
				tr.File = tr.DataName
			}
		}
		n := dump.ParseName(name + ".backward")
		call, err := MapAPI(n)
		if err != nil {
			t.Fatal(err)
		}
		c := &Case{Entry: n.Full, API: n.Op(), Direction: "backward", Forward: n.ForwardName(), Call: call}
		b := &builder{c: c, df: &dumpFile{Path: "dump.json"}, target: bwd, fwd: fwd, bwd: bwd}
		if b.prepare() != nil {
			return
		}
		script, err := b.script("cpu")
		if err != nil {
			t.Fatal(err)
		}
		for i, ch := range script {
			if (ch < 0x20 || ch > 0x7e) && ch != '\n' {
				t.Fatalf("repro.py has byte %#x at %d", ch, i)
			}
		}
		cj, err := b.caseJSON("cpu")
		if err != nil || !json.Valid(cj) {
			t.Fatalf("case.json: %v\n%s", err, cj)
		}
	}
}

// refValue decodes a value as the format reference (§2.5) describes it,
// from jsonoracle's tree.
func refValue(n *jsonoracle.Node, path string, tensors *[]*TensorRef) Value {
	switch n.Kind {
	case jsonoracle.Array:
		v := Value{Kind: KindList, Items: []Value{}}
		for i, e := range n.Elems {
			v.Items = append(v.Items, refValue(e, path+"."+strconv.Itoa(i), tensors))
		}
		return v
	case jsonoracle.Object:
	default:
		return refPlain(n)
	}
	if len(n.Members) == 0 {
		return Value{Kind: KindUnrecorded}
	}
	first := func(name string) *jsonoracle.Node {
		for _, m := range n.Members {
			if m.Name == name {
				return m.Value
			}
		}
		return nil
	}
	typ, hasType := "", false
	if tn := first("type"); tn != nil && tn.Kind == jsonoracle.String {
		typ, hasType = tn.Literal, true
	}
	if ct := first("class_type"); ct != nil && ct.Kind == jsonoracle.String && strings.Contains(ct.Literal, "P2POp") {
		return Value{Kind: KindP2POp, Type: ct.Literal}
	}
	isTensor := strings.HasSuffix(typ, "Tensor") || strings.HasSuffix(typ, "ndarray")
	for _, m := range n.Members {
		switch m.Name {
		case "Max", "Min", "Mean", "Norm", "dtype", "shape", "data_name":
			isTensor = true
		}
	}
	if isTensor {
		tr := &TensorRef{Slot: path, Type: typ}
		for _, m := range n.Members {
			refTensorMember(tr, m.Name, m.Value)
		}
		*tensors = append(*tensors, tr)
		return Value{Kind: KindTensor, Type: typ, Tensor: tr}
	}
	if typ == "torch.ProcessGroup" || first("group_ranks") != nil || first("group_id") != nil || first("process_group_id") != nil {
		v := Value{Kind: KindGroup}
		if r := first("group_ranks"); r != nil {
			for _, e := range r.Elems {
				if k, err := strconv.Atoi(e.Literal); err == nil && e.Kind == jsonoracle.Number {
					v.GroupRanks = append(v.GroupRanks, k)
				}
			}
		}
		return v
	}
	if !hasType {
		v := Value{Kind: KindDict}
		for _, m := range n.Members {
			v.Keys = append(v.Keys, m.Name)
			v.Items = append(v.Items, refValue(m.Value, path+"."+m.Name, tensors))
		}
		return v
	}
	val := first("value")
	if val == nil {
		f := first("format")
		switch {
		case typ == "torch.memory_format" && f != nil && f.Kind == jsonoracle.String:
			return Value{Kind: KindMemoryFormat, Str: strings.TrimPrefix(f.Literal, "torch.")}
		case typ == "ellipsis":
			return Value{Kind: KindEllipsis}
		}
		return Value{Kind: KindUnrecorded, Type: typ}
	}
	p := refPlain(val)
	switch {
	case typ == "int" && p.Kind == KindInt,
		typ == "float" && p.Kind == KindFloat,
		typ == "bool" && p.Kind == KindBool,
		typ == "str" && p.Kind == KindStr:
		return p
	case typ == "float" && p.Kind == KindInt:
		f, _ := strconv.ParseFloat(p.Int, 64)
		return Value{Kind: KindFloat, Float: f}
	case typ == "float" && p.Kind == KindStr:
		switch strings.ToLower(p.Str) {
		case "nan", "-nan", "+nan":
			return Value{Kind: KindFloat, Float: math.NaN()}
		case "inf", "+inf", "infinity", "+infinity":
			return Value{Kind: KindFloat, Float: math.Inf(1)}
		case "-inf", "-infinity":
			return Value{Kind: KindFloat, Float: math.Inf(-1)}
		}
	case typ == "slice" && val.Kind == jsonoracle.Array && len(val.Elems) == 3:
		return Value{Kind: KindSlice, Items: []Value{refPlain(val.Elems[0]), refPlain(val.Elems[1]), refPlain(val.Elems[2])}}
	case typ == "ellipsis":
		return Value{Kind: KindEllipsis}
	case typ == "torch.Size" && val.Kind == jsonoracle.Array:
		return Value{Kind: KindSize, Items: p.Items}
	case typ == "torch.dtype" || typ == "torch.device" || typ == "torch.distributed.ReduceOp" || typ == "torch.memory_format":
		kind := map[string]Kind{"torch.dtype": KindDtype, "torch.device": KindDevice, "torch.distributed.ReduceOp": KindReduceOp, "torch.memory_format": KindMemoryFormat}[typ]
		switch {
		case p.Kind == KindStr && kind == KindMemoryFormat:
			return Value{Kind: kind, Str: strings.TrimPrefix(p.Str, "torch.")}
		case p.Kind == KindStr:
			return Value{Kind: kind, Str: p.Str}
		case p.Kind == KindInt && kind == KindDevice:
			return Value{Kind: kind, Str: p.Int}
		}
		return Value{Kind: KindUnrecorded, Type: typ}
	}
	switch p.Kind {
	case KindFloat, KindInt, KindBool, KindStr, KindNone:
		p.Type = typ
		return p
	}
	return Value{Kind: KindUnrecorded, Type: typ}
}

func refTensorMember(tr *TensorRef, name string, v *jsonoracle.Node) {
	stat := func() (out struct {
		v  float64
		ok bool
	}) {
		switch v.Kind {
		case jsonoracle.Number:
			out.v, out.ok = refFloat(v.Literal), true
		case jsonoracle.NaN:
			out.v, out.ok = math.NaN(), true
		case jsonoracle.PosInf, jsonoracle.NegInf:
			out.v, out.ok = math.Inf(map[bool]int{true: 1, false: -1}[v.Kind == jsonoracle.PosInf]), true
		case jsonoracle.Bool:
			out.v, out.ok = map[bool]float64{true: 1}[v.Bool], true
		case jsonoracle.String:
			if f, ok := nonFiniteString(v.Literal); ok {
				out.v, out.ok = f, true
			}
		}
		return out
	}
	switch name {
	case "dtype":
		if v.Kind == jsonoracle.String {
			tr.Dtype = v.Literal
		}
	case "shape":
		tr.Shape = []int{}
		for _, e := range v.Elems {
			if k, err := strconv.Atoi(e.Literal); err == nil && e.Kind == jsonoracle.Number {
				tr.Shape = append(tr.Shape, k)
			}
		}
	case "Max", "Min", "Mean", "Norm":
		s := stat()
		switch name {
		case "Max":
			tr.Max.Value, tr.Max.Valid = s.v, s.ok
		case "Min":
			tr.Min.Value, tr.Min.Valid = s.v, s.ok
		case "Mean":
			tr.Mean.Value, tr.Mean.Valid = s.v, s.ok
		case "Norm":
			tr.Norm.Value, tr.Norm.Valid = s.v, s.ok
		}
	case "requires_grad":
		tr.RequiresGrad = v.Kind == jsonoracle.Bool && v.Bool
	case "data_name":
		if v.Kind == jsonoracle.String {
			tr.DataName = v.Literal
		}
	}
}

// refPlain decodes JSON as Python's json module does.
func refPlain(n *jsonoracle.Node) Value {
	switch n.Kind {
	case jsonoracle.Null:
		return Value{Kind: KindNone}
	case jsonoracle.Bool:
		return Value{Kind: KindBool, Bool: n.Bool}
	case jsonoracle.NaN:
		return Value{Kind: KindFloat, Float: math.NaN()}
	case jsonoracle.PosInf:
		return Value{Kind: KindFloat, Float: math.Inf(1)}
	case jsonoracle.NegInf:
		return Value{Kind: KindFloat, Float: math.Inf(-1)}
	case jsonoracle.String:
		return Value{Kind: KindStr, Str: n.Literal}
	case jsonoracle.Number:
		if !strings.ContainsAny(n.Literal, ".eE") {
			return Value{Kind: KindInt, Int: n.Literal}
		}
		return Value{Kind: KindFloat, Float: refFloat(n.Literal)}
	case jsonoracle.Array:
		v := Value{Kind: KindList, Items: []Value{}}
		for _, e := range n.Elems {
			v.Items = append(v.Items, refPlain(e))
		}
		return v
	}
	v := Value{Kind: KindDict}
	for _, m := range n.Members {
		v.Keys = append(v.Keys, m.Name)
		v.Items = append(v.Items, refPlain(m.Value))
	}
	return v
}

// refFloat reads a JSON number as Python does: beyond float64 is ±Inf.
func refFloat(lit string) float64 {
	f, _ := strconv.ParseFloat(lit, 64)
	return f
}

// describe writes everything a Value holds, for comparison. Invalid UTF-8
// becomes U+FFFD byte by byte, as the reference decoder has it.
func describe(v Value) string {
	var b strings.Builder
	var walk func(v Value, depth int)
	walk = func(v Value, depth int) {
		fmt.Fprintf(&b, "%s%s type=%q bool=%v int=%q float=%s str=%q keys=%q ranks=%v\n", strings.Repeat(" ", depth),
			v.Kind, utf8Fix(v.Type), v.Bool, v.Int, strconv.FormatFloat(v.Float, 'g', -1, 64), utf8Fix(v.Str), fixAll(v.Keys), v.GroupRanks)
		if t := v.Tensor; t != nil {
			fmt.Fprintf(&b, "%s tensor slot=%q type=%q dtype=%q shape=%v grad=%v data=%q stats=%v %v %v %v\n", strings.Repeat(" ", depth),
				utf8Fix(t.Slot), utf8Fix(t.Type), utf8Fix(t.Dtype), t.Shape, t.RequiresGrad, utf8Fix(t.DataName), t.Max, t.Min, t.Mean, t.Norm)
		}
		for _, it := range v.Items {
			walk(it, depth+1)
		}
	}
	walk(v, 0)
	return b.String()
}

func fixAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = utf8Fix(x)
	}
	return out
}

func utf8Fix(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for s != "" {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}
