package repro

import (
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
)

func TestReproMapAPI(t *testing.T) {
	tests := []struct {
		entry string
		want  Call
		err   string
	}{
		{"Torch.sqrt.0.forward", Call{Kind: CallFunction, Func: "torch.sqrt"}, ""},
		{"Torch.sqrt.0.backward", Call{Kind: CallFunction, Func: "torch.sqrt"}, ""},
		{"Torch.relu_.3.forward", Call{Kind: CallFunction, Func: "torch.relu_", InPlace: true}, ""},
		{"Functional.linear.10.forward", Call{Kind: CallFunction, Func: "torch.nn.functional.linear"}, ""},
		{"Functional.cross_entropy.0.backward", Call{Kind: CallFunction, Func: "torch.nn.functional.cross_entropy"}, ""},
		{"Tensor.sum.0.forward", Call{Kind: CallMethod, Method: "sum"}, ""},
		{"Tensor.__mul__.1.backward", Call{Kind: CallMethod, Method: "__mul__"}, ""},
		{"Tensor.__getitem__.2.forward", Call{Kind: CallMethod, Method: "__getitem__"}, ""},
		{"Tensor.__iadd__.0.forward", Call{Kind: CallMethod, Method: "__iadd__", InPlace: true}, ""},
		{"Tensor.__setitem__.0.forward", Call{Kind: CallMethod, Method: "__setitem__", InPlace: true}, ""},
		{"Tensor.masked_fill_.4.forward", Call{Kind: CallMethod, Method: "masked_fill_", InPlace: true}, ""},
		{"Tensor.add_.0.backward", Call{Kind: CallMethod, Method: "add_", InPlace: true}, ""},
		{"NPU.npu_fusion_attention.0.forward", Call{Kind: CallFunction, Func: "torch_npu.npu_fusion_attention", Module: "torch_npu"}, ""},
		{"Aten.add.0.forward", Call{Kind: CallFunction, Func: "torch.ops.aten.add"}, ""},
		{"VF.lstm.0.forward", Call{Kind: CallFunction, Func: "torch._VF.lstm"}, ""},
		{"Distributed.all_reduce.1.forward", Call{Kind: CallDistributed, Func: "Distributed.all_reduce"}, ""},
		{"Distributed.batch_isend_irecv.0.forward", Call{Kind: CallDistributed, Func: "Distributed.batch_isend_irecv"}, ""},
		// register_custom_api: the prefix is the module's name, dots and all
		{"module_a.compute.0.forward", Call{Kind: CallCustom, Func: "module_a.compute", Hint: "from module_a import compute as API"}, ""},
		{"torch.nn.functional.relu.0.forward", Call{Kind: CallCustom, Func: "torch.nn.functional.relu", Hint: "from torch.nn.functional import relu as API"}, ""},
		{"__main__.add_and_mul.0.backward", Call{Kind: CallCustom, Func: "__main__.add_and_mul", Hint: "from __main__ import add_and_mul as API"}, ""},
		{"_C_ascend.rms_norm.0.forward", Call{Kind: CallCustom, Func: "_C_ascend.rms_norm", Hint: "API = torch.ops._C_ascend.rms_norm"}, ""},
		{"MindSpeed.npu_rotary.0.forward", Call{Kind: CallCustom, Func: "MindSpeed.npu_rotary", Hint: "from MindSpeed import npu_rotary as API"}, ""},
		{"my-lib.op.0.forward", Call{Kind: CallCustom, Func: "my-lib.op"}, ""},
		{"Module.encoder.proj.Linear.forward.0", Call{}, "module call"},
		{"Module.fc.Linear.parameters_grad.0", Call{}, "module call"},
		{"Mint.logical_or.0.forward", Call{}, "MindSpore"},
		{"Primitive.norm.RmsNorm.0.forward", Call{}, "MindSpore"},
		{"Torch.sq-rt.0.forward", Call{}, "not a Python name"},
		{"Tensor.import.0.forward", Call{}, "not a Python name"},
		{"garbage", Call{}, "not an API call entry"},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			got, err := MapAPI(dump.ParseName(tt.entry))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReproResolveOp(t *testing.T) {
	for op, want := range map[string]string{
		"Torch.sqrt.0":                 "Torch.sqrt.0.forward",
		"Torch.sqrt.0.backward":        "Torch.sqrt.0.backward",
		"Tensor.__mul__.1":             "Tensor.__mul__.1.forward",
		"module_a.compute.2":           "module_a.compute.2.forward",
		"Functional.linear.10.forward": "Functional.linear.10.forward",
	} {
		n, err := resolveOp(op)
		if err != nil || n.Full != want {
			t.Errorf("resolveOp(%q) = %q, %v; want %q", op, n.Full, err, want)
		}
	}
	for _, op := range []string{"Torch.sqrt", "", "sqrt", "Torch.sqrt.x"} {
		if _, err := resolveOp(op); err == nil {
			t.Errorf("resolveOp(%q): no error", op)
		}
	}
}
