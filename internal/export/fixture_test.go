package export

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Every real fixture exports one row per tensor the reader yields, in
// order, with the same values.
func TestFixturesRoundTrip(t *testing.T) {
	fx := fixtures(t)
	tests := []struct {
		name  string
		path  string
		steps map[int]bool
		files int
	}{
		{"generated bwd-sqrt-zero L1 steps 4-5", "msprobe-generated/bwd-sqrt-zero-rank2-step5/L1", map[int]bool{4: true, 5: true}, 8},
		{"generated fwd-log-neg mix step 5", "msprobe-generated/fwd-log-neg-rank2-step5/mix", map[int]bool{5: true}, 4},
		{"real resnet50 mix, proc folders", "msprobe-real/gpu-resnet50-mix-2steps", nil, 2},
		{"real megatron npu, lone dump.json", "msprobe-real/megatron-npu-mix-v1stack", nil, 1},
		{"real mindspore megatron", "msprobe-real/mindspore-megatron-mix", nil, 1},
		{"real mix without framework key", "msprobe-real/mix-no-framework-key/dump.json", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := run(t, Options{Path: filepath.Join(fx, tt.path), Steps: tt.steps})
			if s.Written != tt.files || !s.Complete() || len(s.Files) != tt.files {
				t.Fatalf("wrote %d of %d files, %d damaged; want %d", s.Written, len(s.Files), s.Damaged, tt.files)
			}
			var total int64
			for _, f := range s.Files {
				wants, damage := readDump(t, f.Source)
				if damage != nil {
					t.Fatalf("%s: %v", f.Source, damage)
				}
				rows := readRows(t, filepath.Join(s.Out, f.Path))
				checkRows(t, f.Path, rows, wants, f.Step, f.Rank)
				if f.Rows != int64(len(rows)) {
					t.Errorf("%s: summary says %d rows, file has %d", f.Path, f.Rows, len(rows))
				}
				total += int64(len(rows))
			}
			if total != s.Rows || total == 0 {
				t.Errorf("rows: summary %d, files %d", s.Rows, total)
			}
		})
	}
}

// The rows an analyst would look for in the bwd-sqrt-zero fixture.
func TestFixtureSqrtRows(t *testing.T) {
	path := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	s := run(t, Options{Path: path, Steps: map[int]bool{4: true, 5: true}, Jobs: 3})
	rows := readRows(t, filepath.Join(s.Out, "step=5", "rank=2", "part-0.parquet"))
	find := func(name, field, slot string) Row {
		t.Helper()
		for _, r := range rows {
			if r.EntryName == name && r.Field == field && r.Slot == slot {
				return r
			}
		}
		t.Fatalf("no row %s %s %s", name, field, slot)
		return Row{}
	}
	tests := []struct {
		name, field, slot string
		check             func(t *testing.T, r Row)
	}{
		{"Torch.sqrt.0.backward", "output", "0", func(t *testing.T, r Row) {
			if r.Max == nil || !math.IsInf(*r.Max, 1) || r.Nonfinite != "+inf" {
				t.Errorf("max %v nonfinite %q, want +Inf and +inf", r.Max, r.Nonfinite)
			}
			if r.API != "Torch.sqrt" || r.Direction != "backward" || r.Module || r.Step != 5 || r.Rank != 2 {
				t.Errorf("api %q direction %q module %v step %d rank %d", r.API, r.Direction, r.Module, r.Step, r.Rank)
			}
			if !slices.Equal(r.Shape, []int64{4, 7, 1}) || r.Numel == nil || *r.Numel != 28 {
				t.Errorf("shape %v numel %v, want [4 7 1] 28", r.Shape, r.Numel)
			}
		}},
		{"Torch.sqrt.0.backward", "input", "0", func(t *testing.T, r Row) {
			if r.Nonfinite != "finite" || r.Max == nil || *r.Max != 0.0035241334699094296 {
				t.Errorf("max %v nonfinite %q", r.Max, r.Nonfinite)
			}
		}},
		{"Functional.cross_entropy.0.forward", "input_args", "1", func(t *testing.T, r Row) {
			if r.Dtype != "torch.int64" || r.Mean != nil || r.Norm != nil || r.Max == nil || *r.Max != 3 {
				t.Errorf("dtype %q mean %v norm %v max %v, want torch.int64, null, null, 3", r.Dtype, r.Mean, r.Norm, r.Max)
			}
		}},
		{"Functional.cross_entropy.0.forward", "output", "0", func(t *testing.T, r Row) {
			if r.Shape == nil || len(r.Shape) != 0 || r.Numel == nil || *r.Numel != 1 {
				t.Errorf("scalar: shape %v numel %v, want [] and 1", r.Shape, r.Numel)
			}
		}},
		{"Functional.linear.0.forward", "input_args", "0", func(t *testing.T, r Row) {
			if r.Dtype != "torch.float32" || !slices.Equal(r.Shape, []int64{4, 8, 8}) || *r.Numel != 256 || r.RequiresGrad {
				t.Errorf("dtype %q shape %v numel %v requires_grad %v", r.Dtype, r.Shape, *r.Numel, r.RequiresGrad)
			}
			if r.API != "Functional.linear" || r.Direction != "forward" || r.EntryIndex != 1 {
				t.Errorf("api %q direction %q entry_index %d", r.API, r.Direction, r.EntryIndex)
			}
		}},
		{"Functional.linear.0.forward", "input_args", "1", func(t *testing.T, r Row) {
			if r.Dtype != "torch.float32" || !slices.Equal(r.Shape, []int64{32, 8}) || !r.RequiresGrad {
				t.Errorf("weight: dtype %q shape %v requires_grad %v", r.Dtype, r.Shape, r.RequiresGrad)
			}
		}},
		{"Functional.linear.0.forward", "input_args", "2", func(t *testing.T, r Row) {
			if !slices.Equal(r.Shape, []int64{32}) || *r.Numel != 32 {
				t.Errorf("bias: shape %v numel %v", r.Shape, *r.Numel)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.field+"."+tt.slot, func(t *testing.T) { tt.check(t, find(tt.name, tt.field, tt.slot)) })
	}
	for _, r := range rows {
		if r.EntryName == "Functional.linear.0.forward" && r.Field == "output" && (r.Dtype != "torch.float32" || len(r.Shape) == 0) {
			t.Errorf("Functional.linear output: dtype %q shape %v", r.Dtype, r.Shape)
		}
	}
}

// The manifest describes the export.
func TestManifest(t *testing.T) {
	path := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	s := run(t, Options{Path: path, Steps: map[int]bool{5: true}, Version: "v9.9.9"})
	b, err := os.ReadFile(filepath.Join(s.Out, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(path)
	if m.Schema != ManifestSchema || m.Version != "v9.9.9" || m.Source != abs || m.Format != "parquet" {
		t.Errorf("header: %+v", m)
	}
	if m.Counts.Files != 4 || m.Counts.Rows != s.Rows || m.Counts.BytesRead != s.BytesRead || m.Counts.BytesRead == 0 || len(m.Files) != 4 {
		t.Errorf("counts %+v, files %d; summary rows %d bytes %d", m.Counts, len(m.Files), s.Rows, s.BytesRead)
	}
	var names []string
	for _, c := range m.Columns {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, columnNames()) {
		t.Errorf("columns %v", names)
	}
	if f := m.Files[2]; f.Rank != 2 || f.Step != 5 || f.Path != "step=5/rank=2/part-0.parquet" || !filepath.IsAbs(f.Source) || f.Rows == 0 {
		t.Errorf("file entry %+v", f)
	}
	if len(m.Warnings) != 0 {
		t.Errorf("warnings %v", m.Warnings)
	}
}

func columnNames() []string {
	var out []string
	for _, c := range Columns {
		out = append(out, c.Name)
	}
	return out
}
