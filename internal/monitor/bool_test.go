package monitor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A boolean tensor among the targets (a padding mask) has its min and max
// written as the Python bools False and True: they are read as 0 and 1,
// without a warning, and a NaN elsewhere is still found.
func TestBoolRows(t *testing.T) {
	tests := []struct {
		name      string
		min, max  string
		wantFound bool
	}{
		{"mask of both values", "False", "True", true},
		{"mask all true", "True", "True", true},
		{"mask all false", "False", "False", true},
		{"lower-case is not a bool TrainerMon writes", "false", "true", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fd := filepath.Join(dir, "Dec03_21-34-40-rank0-1a2b3c4d")
			if err := os.Mkdir(fd, 0o755); err != nil {
				t.Fatal(err)
			}
			csv := "vpp_stage,name,step,micro_step,min,max,norm,nans,shape,dtype\n"
			for _, step := range []string{"0", "1"} {
				csv += "0,0.attn.mask.input," + step + ",0," + tt.min + "," + tt.max + ",4.0,0.0,\"[4, 4]\",torch.bool\n"
				norm := "12.5"
				if step == "1" {
					norm = "nan"
				}
				csv += "0,0.mlp.fc1.output," + step + ",0,-0.5,0.5," + norm + ",0.0,\"[4, 8]\",torch.float16\n"
			}
			if err := os.WriteFile(filepath.Join(fd, "actv_0-1.csv"), []byte(csv), 0o644); err != nil {
				t.Fatal(err)
			}
			r, f := readRun(t, dir, Options{})
			bools := tt.min == "False" || tt.min == "True"
			for _, w := range r.Warnings {
				if bools {
					t.Errorf("warning %v for a bool row", w)
				}
			}
			if !bools && len(r.Warnings) == 0 {
				t.Errorf("no warning for min %q", tt.min)
			}
			if f.Found != tt.wantFound || f.Step != 1 {
				t.Fatalf("found %v at step %d, want the NaN norm at step 1", f.Found, f.Step)
			}
			if f.Origin == nil || !strings.Contains(f.Origin.Row.Name, "fc1") {
				t.Errorf("origin %+v, want the fc1 row", f.Origin)
			}
		})
	}
}
