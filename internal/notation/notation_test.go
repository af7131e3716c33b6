package notation

import (
	"maps"
	"slices"
	"testing"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		full       string
		api        string
		call       int
		dir        Direction
		module     bool
		dist       bool
		underscore bool
	}{
		{"Distributed.all_reduce.34.forward", "all_reduce", 34, Forward, false, true, false},
		{"Module.conv1.Conv2d.backward.2", "conv1.Conv2d", 2, Backward, true, false, false},
		{"Module.fc.Linear.parameters_grad.0", "fc.Linear", 0, ParamGrad, true, false, false},
		{"Torch.ops.aten.linear_3_1", "linear", 3, Backward, false, false, true},
		{"Torch.log.12345678901.forward", "log", maxCall, Forward, false, false, false},
		{"weird", "weird", -1, DirUnknown, false, false, false},
	}
	for _, tt := range tests {
		n := ParseName(tt.full)
		if n.API != tt.api || n.Call != tt.call || n.Dir != tt.dir || n.Module != tt.module || n.IsDistributed() != tt.dist || n.UnderscoreCounters != tt.underscore {
			t.Errorf("ParseName(%q) = %+v", tt.full, n)
		}
	}
}

func TestRanges(t *testing.T) {
	if got := FormatRanges([]int{8, 0, 1, 2, 2, 5, 7}); got != "0-2,5,7,8" {
		t.Errorf("FormatRanges = %q", got)
	}
	set, err := ParseRanges(" 0, 3-5 ,")
	if err != nil || !slices.Equal(slices.Sorted(maps.Keys(set)), []int{0, 3, 4, 5}) {
		t.Errorf("ParseRanges = %v, %v", set, err)
	}
	for _, bad := range []string{"", "5-3", "-1", "x", "0-2000000"} {
		if _, err := ParseRanges(bad); err == nil {
			t.Errorf("ParseRanges(%q): no error", bad)
		}
	}
}

func TestLibraryFile(t *testing.T) {
	for file, want := range map[string]bool{
		"/usr/lib/python3.10/site-packages/torch/nn/modules/module.py": true,
		"/usr/lib/python3.10/threading.py":                             true,
		`C:\envs\lib\site-packages\torch_npu\utils.py`:                 true,
		"/home/me/train.py":                                            false,
		"/opt/venv/lib/python3.10/site-packages/mymodel/layers.py":     false,
	} {
		if got := LibraryFile(file); got != want {
			t.Errorf("LibraryFile(%q) = %v, want %v", file, got, want)
		}
	}
}
