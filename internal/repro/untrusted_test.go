package repro

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// untrustedDump writes a one-rank tensor dump whose Torch.log.0.forward
// takes the tensors named (data_name), with the header's dump_data_dir
// (null when ""), and returns its root and dump_tensor_data folder (not
// made).
func untrustedDump(t *testing.T, dumpDataDir string, dataNames ...string) (root, data string) {
	t.Helper()
	var args []string
	for _, n := range dataNames {
		q, _ := json.Marshal(n)
		args = append(args, `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "Max": 2.0, "Min": -1.0, "data_name": `+string(q)+`}`)
	}
	dd := "null"
	if dumpDataDir != "" {
		q, _ := json.Marshal(dumpDataDir)
		dd = string(q)
	}
	root = writeDump(t, fmt.Sprintf(`{"task": "tensor", "framework": "pytorch", "dump_data_dir": %s, "data": {"Torch.log.0.forward": {"input_args": [%s], "input_kwargs": {}, "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "Max": NaN, "Min": NaN}]}}}`, dd, strings.Join(args, ", ")))
	return root, filepath.Join(root, "step0", "rank0", "dump_tensor_data")
}

// writeTensor writes a tensor file laid out as torch.save writes it.
func writeTensor(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, torchZip(t, "data.pkl", realPickle, make([]byte, 12)), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func writeLog(t *testing.T, root, out string) (*Case, error) {
	t.Helper()
	return Write(Options{Path: root, Op: "Torch.log.0.forward", Step: 0, Rank: 0, Out: out})
}

// TestReproSourcesStayInTheDump: nothing is copied from a path that resolves
// outside the dump folder given, whichever way the dump names it.
func TestReproSourcesStayInTheDump(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "shadow")
	writeTensor(t, secret, 0o640)
	tests := []struct {
		name        string
		dumpDataDir string
		dataName    string
		prepare     func(t *testing.T, root, data string)
		want        []string
		is          error
	}{
		{name: "dump_data_dir outside", dumpDataDir: outside, dataName: "shadow",
			want: []string{"the header's dump_data_dir " + outside + " lies outside the dump folder", "not followed"}, is: os.ErrNotExist},
		{name: "dump_data_dir climbing out", dumpDataDir: "../../../../../../../../" + outside, dataName: "shadow",
			want: []string{"lies outside the dump folder"}, is: os.ErrNotExist},
		{name: ".. in data_name", dataName: "../../../../../../../../" + secret,
			want: []string{"tensor file shadow (input_args.0 of Torch.log.0.forward) not found", filepath.Join("dump_tensor_data", "shadow")}, is: os.ErrNotExist},
		{name: "absolute data_name", dataName: secret,
			want: []string{"tensor file shadow", "not found"}, is: os.ErrNotExist},
		{name: "symbolic link to a file outside", dataName: "x.pt",
			prepare: func(t *testing.T, root, data string) {
				os.MkdirAll(data, 0o755)
				symlink(t, secret, filepath.Join(data, "x.pt"))
			},
			want: []string{"x.pt: a symbolic link to " + secret, "it leads outside the dump folder", "not copied"}, is: errOutside},
		{name: "data folder linked outside", dataName: "shadow",
			prepare: func(t *testing.T, root, data string) { symlink(t, outside, data) },
			want:    []string{"a symbolic link to " + secret, "it leads outside the dump folder"}, is: errOutside},
		{name: "a named pipe", dataName: "x.pt",
			prepare: func(t *testing.T, root, data string) {
				os.MkdirAll(data, 0o755)
				if err := syscall.Mkfifo(filepath.Join(data, "x.pt"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"a named pipe (FIFO), not a regular file"}},
		{name: "a pickle payload", dataName: "x.pt",
			prepare: func(t *testing.T, root, data string) {
				os.MkdirAll(data, 0o755)
				os.WriteFile(filepath.Join(data, "x.pt"), torchZip(t, "data.pkl", systemPickle, nil), 0o644)
			},
			want: []string{filepath.Join("dump_tensor_data", "x.pt") + " (input_args.0 of Torch.log.0.forward) refused", "it names posix.system", "not copied"}, is: errPickle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, data := untrustedDump(t, tt.dumpDataDir, tt.dataName)
			if tt.prepare != nil {
				tt.prepare(t, root, data)
			}
			out := filepath.Join(t.TempDir(), "case")
			done := make(chan error, 1)
			go func() { _, err := writeLog(t, root, out); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Write blocks")
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
		})
	}
}

// TestReproLinksInsideTheDump: a symbolic link that stays inside the dump
// folder, and a dump folder given through a link, are followed.
func TestReproLinksInsideTheDump(t *testing.T) {
	root, data := untrustedDump(t, "", "x.pt")
	writeTensor(t, filepath.Join(root, "store", "x.pt"), 0o644)
	os.MkdirAll(data, 0o755)
	symlink(t, filepath.Join("..", "..", "..", "store", "x.pt"), filepath.Join(data, "x.pt"))
	link := filepath.Join(t.TempDir(), "link")
	symlink(t, root, link)
	for _, path := range []string{root, link} {
		if _, err := writeLog(t, path, filepath.Join(t.TempDir(), "case")); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// TestReproCopyMode: a copy never has more permission bits than its source,
// nor more than 0644.
func TestReproCopyMode(t *testing.T) {
	for _, tt := range []struct{ src, want os.FileMode }{
		{0o640, 0o640}, {0o600, 0o600}, {0o644, 0o644}, {0o755, 0o644}, {0o444, 0o444}, {0o666, 0o644},
	} {
		t.Run(tt.src.String(), func(t *testing.T) {
			root, data := untrustedDump(t, "", "x.pt")
			writeTensor(t, filepath.Join(data, "x.pt"), tt.src)
			out := filepath.Join(t.TempDir(), "case")
			if _, err := writeLog(t, root, out); err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(filepath.Join(out, "x.pt"))
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != tt.want {
				t.Errorf("copy of a %v file has mode %v, want %v", tt.src, got, tt.want)
			}
		})
	}
}

// TestReproNoPartialFiles: a run that fails or is cancelled after the
// first tensor file leaves the case folder as it was: no tensor file, whole
// or partial, and no temporary file.
func TestReproNoPartialFiles(t *testing.T) {
	tests := []struct {
		name    string
		second  []byte // the second tensor file
		cancel  bool
		premade bool // the case folder exists (empty) before the run
		want    string
	}{
		{name: "second file refused", second: []byte("not a tensor"), want: "b.pt (input_args.1 of Torch.log.0.forward) refused"},
		{name: "second file refused, folder made before", second: []byte("not a tensor"), premade: true, want: "refused"},
		{name: "cancelled", cancel: true, want: "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, data := untrustedDump(t, "", "a.pt", "b.pt")
			writeTensor(t, filepath.Join(data, "a.pt"), 0o644)
			writeTensor(t, filepath.Join(data, "b.pt"), 0o644)
			if tt.second != nil {
				os.WriteFile(filepath.Join(data, "b.pt"), tt.second, 0o644)
			}
			out := filepath.Join(t.TempDir(), "case")
			if tt.premade {
				os.Mkdir(out, 0o755)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tt.cancel {
				cancel()
			}
			defer cancel()
			_, err := Write(Options{Path: root, Op: "Torch.log.0.forward", Step: 0, Rank: 0, Out: out, Context: ctx})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one with %q", err, tt.want)
			}
			if tt.cancel && !errors.Is(err, context.Canceled) {
				t.Errorf("error %v is not context.Canceled", err)
			}
			ents, err := os.ReadDir(out)
			switch {
			case tt.premade && (err != nil || len(ents) > 0):
				t.Errorf("the case folder holds %v (%v), want it empty", ents, err)
			case !tt.premade && err == nil:
				t.Errorf("%s was made, holding %v", out, ents)
			}
		})
	}
}

// TestCaseWriterFailedWrite: a write that fails (a full disk) leaves no
// temporary file, and the error names the file and keeps the cause.
func TestCaseWriterFailedWrite(t *testing.T) {
	dir := t.TempDir()
	w, err := newCaseWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = w.add("x.pt", 0o644, func(f *os.File) error {
		f.Write(make([]byte, 4096))
		return syscall.ENOSPC
	})
	if err == nil || !strings.Contains(err.Error(), "write "+filepath.Join(dir, "x.pt")) || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("error %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("left %v", ents)
	}
}

// cancelAfter is a reader of endless bytes that cancels its context after
// n reads.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.n--; c.n < 0 {
		c.cancel()
	}
	return len(p), nil
}

// TestCopyToStopsWhenCancelled: a copy stops within one read of a cancel.
func TestCopyToStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var dst bytes.Buffer
	err := copyTo(ctx, &dst, &cancelAfter{n: 2, cancel: cancel}, "src")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v", err)
	}
	if dst.Len() != 3*copyChunk {
		t.Errorf("copied %d bytes after the cancel, want %d", dst.Len(), 3*copyChunk)
	}
	err = copyTo(context.Background(), io.Discard, iotestErr{}, "src.pt")
	if err == nil || !strings.Contains(err.Error(), "read src.pt: input/output error") {
		t.Errorf("read error %v", err)
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, syscall.EIO }

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}
