package outguard

import (
	"path/filepath"
	"testing"
)

func TestWithin(t *testing.T) {
	root := tree(t, "dump/step0/rank0/dump.json", "dump2/", "other/", "loop/")
	dump := filepath.Join(root, "dump")
	symlink(t, filepath.Join(dump, "step0"), filepath.Join(root, "other", "into-dump"))
	symlink(t, "b", filepath.Join(root, "loop", "a"))
	symlink(t, "a", filepath.Join(root, "loop", "b"))
	tests := []struct {
		name, path, dir string
		want            bool
		wantErr         bool
	}{
		{"the folder itself", dump, dump, true, false},
		{"a new file inside", filepath.Join(dump, "step0", "verdict.json"), dump, true, false},
		{"a new file in a new folder inside", filepath.Join(dump, "new", "deeper", "v.json"), dump, true, false},
		{"a folder whose name starts alike", filepath.Join(root, "dump2", "v.json"), dump, false, false},
		{"the folder above", filepath.Join(root, "v.json"), dump, false, false},
		{"through a link into the dump", filepath.Join(root, "other", "into-dump", "v.json"), dump, true, false},
		{"a relative spelling", filepath.Join(dump, "step0", "..", "v.json"), dump, true, false},
		{"a dump that does not exist", filepath.Join(root, "v.json"), filepath.Join(root, "none"), false, false},
		{"a file stands only for itself", filepath.Join(dump, "step0", "rank0", "x.json"), filepath.Join(dump, "step0", "rank0", "dump.json"), false, false},
		{"the file itself", filepath.Join(dump, "step0", "rank0", "dump.json"), filepath.Join(dump, "step0", "rank0", "dump.json"), true, false},
		{"a link loop in the output fails closed", filepath.Join(root, "loop", "a", "v.json"), dump, false, true},
		{"a link loop in the dump fails closed", filepath.Join(root, "v.json"), filepath.Join(root, "loop", "a"), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Within(tt.path, tt.dir)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("Within(%s, %s) = %v, %v; want %v, error %v", tt.path, tt.dir, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
