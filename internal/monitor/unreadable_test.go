package monitor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A folder where no file could be read is an error that says why, file by
// file, the first few of them.
func TestReadUnreadableSaysWhy(t *testing.T) {
	tests := []struct {
		name  string
		files int
		want  []string
		not   string
	}{
		{"one file", 1, []string{"no readable monitor csv in", "; Dec03_21-34-40-rank0-1a2b3c4d/actv_0-0.csv: "}, "more"},
		{"five files", 5, []string{"actv_0-0.csv", "actv_2-2.csv", "; and 2 more"}, "actv_3-3.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fd := filepath.Join(dir, "Dec03_21-34-40-rank0-1a2b3c4d")
			os.Mkdir(fd, 0o755)
			for i := range tt.files {
				os.WriteFile(filepath.Join(fd, fmt.Sprintf("actv_%d-%d.csv", i, i)), []byte("garbage without columns\n1,2\n"), 0o644)
			}
			_, err := Read(context.Background(), dir, Options{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), tt.not) {
				t.Errorf("%q holds %q", err, tt.not)
			}
		})
	}
}
