package dumpname

import "testing"

func TestParseName(t *testing.T) {
	tests := []struct {
		full   string
		prefix string
		api    string
		call   int
		dir    Direction
		module bool
		dist   bool
		fwd    string
	}{
		{"Torch.log.0.forward", "Torch", "log", 0, Forward, false, false, "Torch.log.0.forward"},
		{"Torch.sqrt.0.backward", "Torch", "sqrt", 0, Backward, false, false, "Torch.sqrt.0.forward"},
		{"Tensor.__mul__.12.backward", "Tensor", "__mul__", 12, Backward, false, false, "Tensor.__mul__.12.forward"},
		{"Distributed.all_reduce.34.forward", "Distributed", "all_reduce", 34, Forward, false, true, ""},
		{"MintDistributed.all_gather.1.forward", "MintDistributed", "all_gather", 1, Forward, false, true, ""},
		{"moe_ext.kernels.fused_attention.3.backward", "moe_ext.kernels", "fused_attention", 3, Backward, false, false, "moe_ext.kernels.fused_attention.3.forward"},
		{"torch.nn.functional.relu.0.forward", "torch.nn.functional", "relu", 0, Forward, false, false, ""},
		{"Module.encoder.proj.Linear.forward.0", "Module", "encoder.proj.Linear", 0, Forward, true, false, ""},
		{"Module.conv1.Conv2d.backward.2", "Module", "conv1.Conv2d", 2, Backward, true, false, "Module.conv1.Conv2d.forward.2"},
		{"Module.fc.Linear.parameters_grad.0", "Module", "fc.Linear", 0, ParamGrad, true, false, ""},
		{"Module.parameters_grad.0", "Module", "", 0, ParamGrad, true, false, ""}, // an empty module path
		{"Module.backward.0", "Module", "", 0, Backward, true, false, "Module.forward.0"},
		{"Cell.network_with_loss.module.Embedding.forward.0", "Cell", "network_with_loss.module.Embedding", 0, Forward, true, false, ""},
		{"Primitive.norm.RmsNorm.0.forward", "Primitive.norm", "RmsNorm", 0, Forward, false, false, ""},
		{"weird", "", "weird", -1, DirUnknown, false, false, ""},
		{"a.b.forward", "", "a.b.forward", -1, DirUnknown, false, false, ""},
		{".0.forward", "", ".0.forward", -1, DirUnknown, false, false, ""},
		{"x.0.debug", "", "x.0.debug", -1, DirUnknown, false, false, ""},
	}
	for _, tt := range tests {
		n := ParseName(tt.full)
		if n.Prefix != tt.prefix || n.API != tt.api || n.Call != tt.call || n.Dir != tt.dir || n.Module != tt.module {
			t.Errorf("ParseName(%q) = %+v", tt.full, n)
		}
		if n.IsDistributed() != tt.dist {
			t.Errorf("ParseName(%q).IsDistributed() = %v", tt.full, n.IsDistributed())
		}
		want := tt.fwd
		if want == "" {
			want = tt.full
		}
		if got := n.ForwardName(); got != want {
			t.Errorf("ParseName(%q).ForwardName() = %q, want %q", tt.full, got, want)
		}
	}
}

// TestParseNameUnderscoreCounters reads the names of the form the
// nan-overflow-detection skill documents, "{Prefix}.{api}_{N}_{M}", and
// leaves the names msprobe writes as they were.
func TestParseNameUnderscoreCounters(t *testing.T) {
	tests := []struct {
		full   string
		prefix string
		api    string
		call   int
		dir    Direction
		under  bool
		dist   bool
		fwd    string
	}{
		{"Distributed.all_reduce_0_0", "Distributed", "all_reduce", 0, Forward, true, true, "Distributed.all_reduce_0_0"},
		{"Distributed.all_reduce_12_0", "Distributed", "all_reduce", 12, Forward, true, true, "Distributed.all_reduce_12_0"},
		{"Torch.ops.aten.linear_0_0", "Torch.ops.aten", "linear", 0, Forward, true, false, "Torch.ops.aten.linear_0_0"},
		{"Torch.nn.functional.linear_3_1", "Torch.nn.functional", "linear", 3, Backward, true, false, "Torch.nn.functional.linear_3_0"},
		{"Tensor.__add___2_0", "Tensor", "__add__", 2, Forward, true, false, "Tensor.__add___2_0"},
		// not of that form: unread, as before
		{"Torch.linear_0_2", "", "Torch.linear_0_2", -1, DirUnknown, false, false, "Torch.linear_0_2"},
		{"Torch.linear_0", "", "Torch.linear_0", -1, DirUnknown, false, false, "Torch.linear_0"},
		{"Torch._0_0", "", "Torch._0_0", -1, DirUnknown, false, false, "Torch._0_0"},
		{"linear_0_0", "", "linear_0_0", -1, DirUnknown, false, false, "linear_0_0"},
		{"Torch.linear_a_0", "", "Torch.linear_a_0", -1, DirUnknown, false, false, "Torch.linear_a_0"},
		// what msprobe writes is not read as that form
		{"Distributed.all_reduce.0.forward", "Distributed", "all_reduce", 0, Forward, false, true, "Distributed.all_reduce.0.forward"},
		{"Torch.ops.aten.linear.0.backward", "Torch.ops.aten", "linear", 0, Backward, false, false, "Torch.ops.aten.linear.0.forward"},
	}
	for _, tt := range tests {
		n := ParseName(tt.full)
		if n.Prefix != tt.prefix || n.API != tt.api || n.Call != tt.call || n.Dir != tt.dir || n.UnderscoreCounters != tt.under || n.Module {
			t.Errorf("ParseName(%q) = %+v", tt.full, n)
		}
		if n.IsDistributed() != tt.dist {
			t.Errorf("ParseName(%q).IsDistributed() = %v", tt.full, n.IsDistributed())
		}
		if got := n.ForwardName(); got != tt.fwd {
			t.Errorf("ParseName(%q).ForwardName() = %q, want %q", tt.full, got, tt.fwd)
		}
		if tt.under {
			if got, want := n.Op(), tt.prefix+"."+tt.api; got != want {
				t.Errorf("ParseName(%q).Op() = %q, want %q", tt.full, got, want)
			}
		}
	}
}
