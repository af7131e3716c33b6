package repro

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realPickle is the data.pkl torch 1.13 writes for a float32 tensor (from a
// tensor file msprobe saved).
const realPickle = "\x80\x02ctorch._utils\n_rebuild_tensor_v2\nq\x00((X\x07\x00\x00\x00storageq\x01ctorch\nFloatStorage\nq\x02X\x01\x00\x00\x000q\x03X\x03\x00\x00\x00cpuq\x04K\xe0tq\x05QK\x00K\x04K\x07K\x08\x87q\x06K8K\x08K\x01\x87q\x07\x89ccollections\nOrderedDict\nq\x08)Rq\ttq\nRq\x0b."

// systemPickle calls posix.system("touch x") when it is unpickled.
const systemPickle = "\x80\x02cposix\nsystem\nq\x00X\x07\x00\x00\x00touch xq\x01\x85q\x02Rq\x03."

// torchZip is a zip archive laid out as torch.save lays it out: data.pkl
// first, stored, then the storage bytes.
func torchZip(t *testing.T, first string, pkl string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, f := range []struct {
		name string
		body []byte
	}{{"archive/" + first, []byte(pkl)}, {"archive/data/0", data}, {"archive/version", []byte("3\n")}} {
		w, err := z.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(f.body)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// npyHeaderFile is a version 1.0 .npy file with the given header.
func npyHeaderFile(h string) []byte {
	h += strings.Repeat(" ", 63-(10+len(h))%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	return append(append(b, h...), make([]byte, 48)...)
}

// npyFile is a version 1.0 .npy file with the given dtype.
func npyFile(descr string) []byte {
	h := "{'descr': " + descr + ", 'fortran_order': False, 'shape': (3,), }"
	h += strings.Repeat(" ", 63-(10+len(h))%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	return append(append(b, h...), make([]byte, 12)...)
}

func TestCheckTensorFile(t *testing.T) {
	tests := []struct {
		name, file string
		content    []byte
		want       string // "" for accepted
		code       bool   // refused as a file that could run code
	}{
		{"torch.save zip", "x.pt", torchZip(t, "data.pkl", realPickle, make([]byte, 12)), "", false},
		{"legacy format", "x.pt", []byte(strings.Repeat(realPickle, 5) + "raw storage bytes"), "", false},
		{"zip payload", "x.pt", torchZip(t, "data.pkl", systemPickle, nil), "data.pkl: it names posix.system", true},
		{"legacy payload", "x.pt", []byte(systemPickle), "pickle 1 of the legacy torch.save format: it names posix.system", true},
		{"payload in the object pickle", "x.pt", []byte(realPickle + realPickle + realPickle + systemPickle), "pickle 4", true},
		{"INST", "x.pt", []byte("\x80\x02(X\x01\x00\x00\x00xiposix\nsystem\n."), "it names posix.system", true},
		{"STACK_GLOBAL", "x.pt", []byte("\x80\x04\x8c\x08builtins\x94\x8c\x04eval\x94\x93\x94."), "it names builtins.eval", true},
		{"STACK_GLOBAL from the memo", "x.pt", []byte("\x80\x04\x8c\x02os\x94\x8c\x06system\x940h\x00h\x01\x93."), "it names os.system", true},
		// "torch" and "Size" put at 0 and 1, then overwritten there by
		// values reached through POP: Python reads posix.system
		{"STACK_GLOBAL from a memo overwritten", "x.pt", []byte("\x80\x04\x8c\x05torch\x94\x8c\x04Size\x94\x8c\x05posix\x8c\x06system\x8c\x01x0q\x010q\x00h\x00h\x01\x93."), "a global whose name is computed", true},
		{"MEMOIZE after PUT", "x.pt", []byte("\x80\x04\x8c\x05posixq\x05\x8c\x06system\x94\x8c\x05torch\x94\x8c\x04Size\x94h\x05h\x01\x93."), "it names posix.system", true},
		{"STACK_GLOBAL computed", "x.pt", []byte("\x80\x04\x8c\x02os\x94K\x01\x93."), "a global whose name is computed", true},
		{"STACK_GLOBAL allowed", "x.pt", []byte("\x80\x04\x8c\x0bcollections\x94\x8c\x0bOrderedDict\x94\x93)R." + strings.Repeat("\x80\x02N.", 4)), "", false},
		{"EXT1", "x.pt", []byte("\x80\x02\x82\x01."), "extension code", true},
		{"zip, first record not data.pkl", "x.pt", torchZip(t, "run.py", realPickle, nil), `first record is "archive/run.py"`, false},
		{"cut pickle", "x.pt", []byte(realPickle[:60]), "the pickle ends before its STOP opcode", false},
		{"huge value", "x.pt", []byte("\x80\x04\x8e\xff\xff\xff\xff\xff\xff\x00\x00"), "a value of", false},
		{"unknown opcode", "x.pt", []byte("\x80\x02\xff"), "opcode 0xff is not a pickle opcode", false},
		{"empty", "x.pt", nil, "the file is empty", false},
		{"text", "x.pt", []byte("hello"), "neither a zip archive nor a pickle", false},
		{"npy float32", "x.npy", npyFile("'<f4'"), "", false},
		{"npy bool", "x.NPY", npyFile("'|b1'"), "", false},
		{"npy complex128", "x.npy", npyFile("'<c16'"), "", false},
		{"npy object", "x.npy", npyFile("'|O'"), `dtype "|O" in its .npy header, an object array`, true},
		{"npy structured", "x.npy", npyFile("[('a', '|O')]"), "a structured dtype", false},
		{"npy unicode", "x.npy", npyFile("'<U5'"), `dtype "<U5"`, false},
		// numpy reads the header with ast.literal_eval: the last of two keys
		// wins, and keys may be double-quoted or adjacent literals
		{"npy descr twice", "x.npy", npyHeaderFile("{'descr': '<f4', 'descr': '|O', 'fortran_order': False, 'shape': (3,), }"), "not in the form numpy writes", false},
		{"npy descr double-quoted", "x.npy", npyHeaderFile(`{"descr": '|O', 'fortran_order': False, 'shape': (3,), }`), "not in the form numpy writes", false},
		{"npy descr split", "x.npy", npyHeaderFile("{'de' 'scr': '|O', 'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), "not in the form numpy writes", false},
		{"npy scalar and matrix", "x.npy", npyHeaderFile("{'descr': '<f8', 'fortran_order': True, 'shape': (), }"), "", false},
		{"npy matrix", "x.npy", npyHeaderFile("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }"), "", false},
		{"npy bad magic", "x.npy", []byte("\x93NUMPZ\x01\x00"), "no .npy magic", false},
		{"npy huge header", "x.npy", []byte("\x93NUMPY\x02\x00\xff\xff\xff\x7f"), "a .npy header longer than", false},
		{"npy cut header", "x.npy", npyFile("'<f4'")[:30], "cut in its header", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkTensorFile(bytes.NewReader(tt.content), tt.file)
			if tt.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			if errors.Is(err, errPickle) != tt.code {
				t.Errorf("error %q: is errPickle %v, want %v", err, !tt.code, tt.code)
			}
		})
	}
}

// msprobeTensorFiles are the tensor files the real msprobe saved in the
// shared fixtures, and the golden dump's.
func msprobeTensorFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, root := range []string{fixtures(t), goldenDump} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".pt") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 100 {
		t.Fatalf("only %d tensor files found", len(files))
	}
	return files
}

// TestCheckTensorFileReal: every tensor file msprobe saved passes the check.
func TestCheckTensorFileReal(t *testing.T) {
	for _, path := range msprobeTensorFiles(t) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkTensorFile(f, filepath.Base(path)); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		f.Close()
	}
}
