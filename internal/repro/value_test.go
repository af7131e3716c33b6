package repro

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// decodeTests are the non-tensor encodings of msprobe (§2.5 of the format
// reference), and the oddities a reader meets.
var decodeTests = []struct {
	name, in string
	kind     Kind
	python   string // the expression repro.py gets
	json     string // case.json's form
	note     bool   // Note is not empty
	eq       string // a JSON value the expression must equal in Python ("" to skip)
}{
	{"None", `null`, KindNone, `None`, `{"type":"None"}`, false, `null`},
	{"bool", `{"type": "bool", "value": true}`, KindBool, `True`, `{"type":"bool","value":true}`, false, `true`},
	{"bool false", `{"type": "bool", "value": false}`, KindBool, `False`, `{"type":"bool","value":false}`, false, `false`},
	{"int", `{"type": "int", "value": -100}`, KindInt, `-100`, `{"type":"int","value":-100}`, false, `-100`},
	{"big int", `{"type": "int", "value": 123456789012345678901234567890}`, KindInt, `123456789012345678901234567890`,
		`{"type":"int","value":123456789012345678901234567890}`, false, `123456789012345678901234567890`},
	{"float", `{"type": "float", "value": -0.05}`, KindFloat, `-0.05`, `{"type":"float","value":-0.05}`, false, `-0.05`},
	{"float zero", `{"type": "float", "value": 0.0}`, KindFloat, `0.0`, `{"type":"float","value":0}`, false, `0.0`},
	{"float integral literal", `{"type": "float", "value": 1}`, KindFloat, `1.0`, `{"type":"float","value":1}`, false, `1.0`},
	{"float exponent", `{"type": "float", "value": 1e-05}`, KindFloat, `1e-05`, `{"type":"float","value":1e-05}`, false, `1e-05`},
	{"float NaN", `{"type": "float", "value": NaN}`, KindFloat, `NAN`, `{"type":"float","value":"nan"}`, false, ""},
	{"float Infinity", `{"type": "float", "value": Infinity}`, KindFloat, `INF`, `{"type":"float","value":"inf"}`, false, ""},
	{"float -Infinity", `{"type": "float", "value": -Infinity}`, KindFloat, `-INF`, `{"type":"float","value":"-inf"}`, false, ""},
	{"float string nan", `{"type": "float", "value": "nan"}`, KindFloat, `NAN`, `{"type":"float","value":"nan"}`, false, ""},
	{"float string -inf", `{"type": "float", "value": "-inf"}`, KindFloat, `-INF`, `{"type":"float","value":"-inf"}`, false, ""},
	{"float beyond float64", `{"type": "float", "value": -1e309}`, KindFloat, `-INF`, `{"type":"float","value":"-inf"}`, false, ""},
	{"str", `{"type": "str", "value": "mean"}`, KindStr, `"mean"`, `{"type":"str","value":"mean"}`, false, `"mean"`},
	{"str escapes", `{"type": "str", "value": "a\"b\\c\nd\u00e9\ud83d\ude00\u0001"}`, KindStr,
		`"a\"b\\c\nd\u00e9\U0001f600\x01"`, `{"type":"str","value":"a\"b\\c\ndé😀\u0001"}`, false, `"a\"b\\c\nd\u00e9\ud83d\ude00\u0001"`},
	{"str code", `{"type": "str", "value": "\"); import os; (\""}`, KindStr, `"\"); import os; (\""`, `{"type":"str","value":"\"); import os; (\""}`, false, `"\"); import os; (\""`},
	{"slice", `{"type": "slice", "value": [1, null, 2]}`, KindSlice, `slice(1, None, 2)`,
		`{"type":"slice","value":[{"type":"int","value":1},{"type":"None"},{"type":"int","value":2}]}`, false, ""},
	{"slice all None", `{"type": "slice", "value": [null, null, null]}`, KindSlice, `slice(None, None, None)`,
		`{"type":"slice","value":[{"type":"None"},{"type":"None"},{"type":"None"}]}`, false, ""},
	{"ellipsis", `{"type": "ellipsis", "value": "..."}`, KindEllipsis, `...`, `{"type":"ellipsis"}`, false, ""},
	{"numpy float32", `{"type": "float32", "value": 1.5}`, KindFloat, `1.5`, `{"type":"float","msprobe_type":"float32","value":1.5}`, false, `1.5`},
	{"numpy int64", `{"type": "int64", "value": 3}`, KindInt, `3`, `{"type":"int","msprobe_type":"int64","value":3}`, false, `3`},
	{"numpy bool_", `{"type": "bool_", "value": true}`, KindBool, `True`, `{"type":"bool","msprobe_type":"bool_","value":true}`, false, `true`},
	{"numpy float64 NaN", `{"type": "float64", "value": NaN}`, KindFloat, `NAN`, `{"type":"float","msprobe_type":"float64","value":"nan"}`, false, ""},
	{"torch.Size", `{"type": "torch.Size", "value": [2, 3]}`, KindSize, `torch.Size([2, 3])`,
		`{"type":"torch.Size","value":[{"type":"int","value":2},{"type":"int","value":3}]}`, false, `[2, 3]`},
	{"torch.Size empty", `{"type": "torch.Size", "value": []}`, KindSize, `torch.Size([])`, `{"type":"torch.Size","value":[]}`, false, `[]`},
	{"dtype kwarg", `{"type": "torch.dtype", "value": "torch.float16"}`, KindDtype, `torch.float16`, `{"type":"torch.dtype","value":"torch.float16"}`, false, ""},
	{"dtype bad", `{"type": "torch.dtype", "value": "torch.float16; import os"}`, KindDtype, `None`,
		`{"type":"torch.dtype","value":"torch.float16; import os"}`, true, ""},
	{"device kwarg", `{"type": "torch.device", "value": "cuda:0"}`, KindDevice, `torch.device(device)`, `{"type":"torch.device","value":"cuda:0"}`, true, ""},
	{"device cpu", `{"type": "torch.device", "value": "cpu:None"}`, KindDevice, `torch.device(device)`, `{"type":"torch.device","value":"cpu:None"}`, true, ""},
	{"device int", `{"type": "torch.device", "value": 0}`, KindDevice, `torch.device(device)`, `{"type":"torch.device","value":"0"}`, true, ""},
	{"positional dtype or device", `{}`, KindUnrecorded, `None`, `{"type":"unrecorded"}`, true, ""},
	{"memory_format", `{"type": "torch.memory_format", "format": "channels_last"}`, KindMemoryFormat, `torch.channels_last`,
		`{"type":"torch.memory_format","value":"channels_last"}`, false, ""},
	{"memory_format str", `{"type": "torch.memory_format", "format": "torch.contiguous_format"}`, KindMemoryFormat, `torch.contiguous_format`,
		`{"type":"torch.memory_format","value":"contiguous_format"}`, false, ""},
	{"process group", `{"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "1a2b3c4d"}`, KindGroup, `None`,
		`{"type":"torch.ProcessGroup","ranks":[0,1]}`, true, ""},
	{"process group 2024-11", `{"type": "torch.ProcessGroup", "group_ranks": [2, 3], "process_group_id": "a9f"}`, KindGroup, `None`,
		`{"type":"torch.ProcessGroup","ranks":[2,3]}`, true, ""},
	{"reduce op", `{"type": "torch.distributed.ReduceOp", "value": "RedOpType.SUM"}`, KindReduceOp, `torch.distributed.ReduceOp.SUM`,
		`{"type":"torch.distributed.ReduceOp","value":"RedOpType.SUM"}`, false, ""},
	{"reduce op address", `{"type": "torch.distributed.ReduceOp", "value": "<torch.distributed.distributed_c10d.ReduceOp object at 0x7f>"}`, KindReduceOp, `None`,
		`{"type":"torch.distributed.ReduceOp","value":"\u003ctorch.distributed.distributed_c10d.ReduceOp object at 0x7f\u003e"}`, true, ""},
	{"P2POp", `{"class_type": "torch.distributed.P2POp", "tensor": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2]}, "op": "isend", "peer": 1, "tag": 0}`,
		KindP2POp, `None`, `{"type":"torch.distributed.P2POp"}`, true, ""},
	{"list", `[{"type": "int", "value": 2}, {"type": "int", "value": 2}]`, KindList, `(2, 2)`,
		`{"type":"list","value":[{"type":"int","value":2},{"type":"int","value":2}]}`, false, `[2, 2]`},
	{"list of one", `[{"type": "int", "value": 7}]`, KindList, `(7,)`, `{"type":"list","value":[{"type":"int","value":7}]}`, false, `[7]`},
	{"empty list", `[]`, KindList, `()`, `{"type":"list","value":[]}`, false, `[]`},
	{"nested", `[[{"type": "int", "value": 1}, null], [{"type": "slice", "value": [null, 2, null]}, {"type": "ellipsis", "value": "..."}]]`, KindList,
		`((1, None), (slice(None, 2, None), ...))`,
		`{"type":"list","value":[{"type":"list","value":[{"type":"int","value":1},{"type":"None"}]},{"type":"list","value":[{"type":"slice","value":[{"type":"None"},{"type":"int","value":2},{"type":"None"}]},{"type":"ellipsis"}]}]}`, false, ""},
	{"dict", `{"alpha": {"type": "float", "value": 0.5}, "beta": null, "with space": {"type": "str", "value": "x"}}`, KindDict,
		`{"alpha": 0.5, "beta": None, "with space": "x"}`,
		`{"type":"dict","value":{"alpha":{"type":"float","value":0.5},"beta":{"type":"None"},"with space":{"type":"str","value":"x"}}}`, false,
		`{"alpha": 0.5, "beta": null, "with space": "x"}`},
	{"tensors in a list", `[{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "data_name": "a.pt"}, {"type": "torch.Tensor", "dtype": "torch.int64", "shape": [], "data_name": "b.pt"}]`,
		KindList, `(t0, t1)`, `{"type":"list","value":[{"type":"tensor","msprobe_type":"torch.Tensor","file":"","dtype":"torch.float32"},{"type":"tensor","msprobe_type":"torch.Tensor","file":"","dtype":"torch.int64"}]}`, false, ""},
	{"MindSpore group name", `{"type": "str", "value": "tp-0-1-2-3"}`, KindStr, `"tp-0-1-2-3"`, `{"type":"str","value":"tp-0-1-2-3"}`, false, `"tp-0-1-2-3"`},
	{"unknown type", `{"type": "foo.Bar"}`, KindUnrecorded, `None`, `{"type":"unrecorded","msprobe_type":"foo.Bar"}`, true, ""},
	{"unknown type with object value", `{"type": "foo", "value": {"x": 1}}`, KindUnrecorded, `None`, `{"type":"unrecorded","msprobe_type":"foo"}`, true, ""},
	{"int with string value", `{"type": "int", "value": "3"}`, KindStr, `"3"`, `{"type":"str","msprobe_type":"int","value":"3"}`, false, `"3"`},
	{"bare number", `2.5`, KindFloat, `2.5`, `{"type":"float","value":2.5}`, false, `2.5`},
	{"bare NaN", `NaN`, KindFloat, `NAN`, `{"type":"float","value":"nan"}`, false, ""},
}

func decodeString(t testing.TB, in string) (Value, []*TensorRef) {
	t.Helper()
	n, err := decodeTree([]byte(in), 0)
	if err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	var ts []*TensorRef
	v := decodeValue(n, "0", &ts)
	for i, tr := range ts {
		tr.Var = "t" + string(rune('0'+i))
	}
	return v, ts
}

func TestReproDecodeValue(t *testing.T) {
	for _, tt := range decodeTests {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := decodeString(t, tt.in)
			if v.Kind != tt.kind {
				t.Errorf("kind %s, want %s", v.Kind, tt.kind)
			}
			if got := v.Python(); got != tt.python {
				t.Errorf("python %s, want %s", got, tt.python)
			}
			js, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(js) != tt.json {
				t.Errorf("json %s\n       want %s", js, tt.json)
			}
			if (v.Note() != "") != tt.note {
				t.Errorf("note %q, want one: %v", v.Note(), tt.note)
			}
		})
	}
}

func TestReproDecodeTensorSlots(t *testing.T) {
	_, ts := decodeString(t, `{"x": [null, {"type": "torch.Tensor", "dtype": "torch.bool", "shape": [3, 0], "Max": true, "Min": false, "Mean": null, "Norm": null, "requires_grad": true, "data_name": "m.pt"}]}`)
	if len(ts) != 1 {
		t.Fatalf("%d tensors", len(ts))
	}
	tr := ts[0]
	if tr.Slot != "0.x.1" || tr.Dtype != "torch.bool" || len(tr.Shape) != 2 || tr.Shape[1] != 0 || !tr.RequiresGrad || tr.DataName != "m.pt" {
		t.Errorf("%+v", tr)
	}
	if !tr.Max.Valid || tr.Max.Value != 1 || !tr.Min.Valid || tr.Min.Value != 0 || tr.Mean.Valid || tr.Holds() != "finite" {
		t.Errorf("stats %+v %+v %+v: holds %s", tr.Max, tr.Min, tr.Mean, tr.Holds())
	}
	_, ts = decodeString(t, `{"type": "torch.Tensor", "Max": NaN, "Min": -Infinity, "Mean": "inf", "Norm": 1e400}`)
	if h := ts[0].Holds(); h != "nan,-inf" {
		t.Errorf("holds %s", h)
	}
	_, ts = decodeString(t, `{"type": "torch.Tensor", "md5": "0x00"}`)
	if h := ts[0].Holds(); h != "unknown" {
		t.Errorf("holds %s", h)
	}
}

// TestReproPythonLiterals evaluates every expression of decodeTests with
// Python and torch, and compares it with the JSON value it must equal.
func TestReproPythonLiterals(t *testing.T) {
	needTorch(t)
	type item struct {
		Name, Expr string
		Eq         *json.RawMessage
	}
	var items []item
	for _, tt := range decodeTests {
		v, _ := decodeString(t, tt.in)
		it := item{Name: tt.name, Expr: v.Python()}
		if tt.eq != "" {
			raw := json.RawMessage(tt.eq)
			it.Eq = &raw
		}
		items = append(items, it)
	}
	in, _ := json.Marshal(items)
	script := `
import json, sys, torch
import torch.distributed
NAN, INF, device = float("nan"), float("inf"), "cpu"
t0, t1 = torch.zeros(2), torch.ones(1)
bad = 0
for it in json.load(sys.stdin):
    try:
        v = eval(it["Expr"])
    except Exception as e:
        print("%s: %s: %r" % (it["Name"], it["Expr"], e)); bad += 1; continue
    if it["Eq"] is not None:
        want = it["Eq"]
        got = json.loads(json.dumps(v, default=list)) if not isinstance(v, torch.Size) else list(v)
        if isinstance(want, list) and isinstance(v, tuple):
            got = json.loads(json.dumps(list(v)))
        if got != want:
            print("%s: %s gives %r, want %r" % (it["Name"], it["Expr"], v, want)); bad += 1
sys.exit(1 if bad else 0)
`
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
