package outguard

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	errBroken := errors.New("the report broke off")
	tests := []struct {
		name string
		// setup prepares dir and returns the path to write and the file
		// whose content is then checked (the link's target for a link)
		setup    func(t *testing.T, dir string) (path, check string)
		write    string
		fail     bool
		wantErr  string
		want     string
		wantMode fs.FileMode
	}{
		{name: "new file", setup: func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "verdict.json")
			return p, p
		}, write: "new", want: "new", wantMode: 0o644},
		{name: "replaced file keeps its mode", setup: func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "verdict.json")
			os.WriteFile(p, []byte("old"), 0o600)
			os.Chmod(p, 0o600)
			return p, p
		}, write: "new", want: "new", wantMode: 0o600},
		{name: "failed write keeps the old file", setup: func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "verdict.json")
			os.WriteFile(p, []byte("old"), 0o644)
			return p, p
		}, write: "half", fail: true, wantErr: "the report broke off", want: "old", wantMode: 0o644},
		{name: "failed write leaves nothing new", setup: func(t *testing.T, dir string) (string, string) {
			return filepath.Join(dir, "verdict.json"), ""
		}, write: "half", fail: true, wantErr: "the report broke off"},
		{name: "a link is written through", setup: func(t *testing.T, dir string) (string, string) {
			target := filepath.Join(dir, "real.json")
			os.WriteFile(target, []byte("old"), 0o644)
			symlink(t, "real.json", filepath.Join(dir, "link.json"))
			return filepath.Join(dir, "link.json"), target
		}, write: "new", want: "new", wantMode: 0o644},
		{name: "a folder is refused", setup: func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "out")
			os.Mkdir(p, 0o755)
			return p, ""
		}, write: "new", wantErr: "it is a folder"},
		{name: "a missing folder names the target", setup: func(t *testing.T, dir string) (string, string) {
			return filepath.Join(dir, "no", "such", "verdict.json"), ""
		}, write: "new", wantErr: filepath.Join("no", "such", "verdict.json") + ": no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path, check := tt.setup(t, dir)
			before := listing(t, dir)
			err := WriteFile(path, func(w io.Writer) error {
				io.WriteString(w, tt.write)
				if tt.fail {
					return errBroken
				}
				return nil
			})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("WriteFile: %v, want an error with %q", err, tt.wantErr)
			}
			if tt.fail && !errors.Is(err, errBroken) {
				t.Errorf("the writer's error is not wrapped: %v", err)
			}
			if err != nil {
				if after := listing(t, dir); after != before {
					t.Errorf("a failed write changed the folder: %q, was %q", after, before)
				}
			}
			if check == "" {
				return
			}
			got, rerr := os.ReadFile(check)
			if rerr != nil || string(got) != tt.want {
				t.Errorf("%s holds %q (%v), want %q", check, got, rerr, tt.want)
			}
			if info, err := os.Stat(check); err != nil || info.Mode().Perm() != tt.wantMode {
				t.Errorf("%s: mode %v (%v), want %v", check, info.Mode().Perm(), err, tt.wantMode)
			}
			if li, err := os.Lstat(path); err == nil && path != check && li.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link %s was replaced by a file", path)
			}
		})
	}
}

// A PathError names the file the user gave, not the temporary file.
func TestWriteFileErrorNamesTheTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "v.json")
	err := WriteFile(path, func(io.Writer) error { return nil })
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != path || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %#v, want a PathError for %s", err, path)
	}
}

// A device is written in place: -o /dev/null keeps working.
func TestWriteFileDevice(t *testing.T) {
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Fatalf("no %s: %v", os.DevNull, err)
	}
	if err := WriteFile(os.DevNull, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(os.DevNull); err != nil || info.Mode().IsRegular() {
		t.Errorf("%s became a regular file", os.DevNull)
	}
}

// listing is the names and contents of dir's files, sorted.
func listing(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		b.WriteString(e.Name())
		if !e.IsDir() {
			c, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			b.WriteString("=" + string(c))
		}
		b.WriteString(";")
	}
	return b.String()
}

// The check of WriteFileChecked runs once the temporary file is written:
// when it fails (another process wrote the file meanwhile), nothing is
// renamed, what the other wrote stays, and no temporary file is left.
func TestWriteFileChecked(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "summary.jsonl")
	errTaken := errors.New("taken meanwhile")
	err := WriteFileChecked(p, func(w io.Writer) error {
		if err := os.WriteFile(p, []byte("the other's"), 0o644); err != nil { // the other process
			t.Fatal(err)
		}
		_, err := io.WriteString(w, "mine")
		return err
	}, func() error { return errTaken })
	if !errors.Is(err, errTaken) {
		t.Fatalf("error %v, want %v", err, errTaken)
	}
	if b, _ := os.ReadFile(p); string(b) != "the other's" {
		t.Errorf("the file holds %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left %v", ents)
	}
	if err := WriteFileChecked(p, func(w io.Writer) error { _, err := io.WriteString(w, "mine"); return err }, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "mine" {
		t.Errorf("the file holds %q", b)
	}
}
