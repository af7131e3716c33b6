package robustness

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cases of nanhunt repro on a hostile tensor dump: tensor files that hold a
// pickle payload, paths that lead out of the dump, a full disk and a signal
// in the middle of a copy.

// tensorPickle is the data.pkl torch 1.13 writes for a float32 tensor.
const tensorPickle = "\x80\x02ctorch._utils\n_rebuild_tensor_v2\nq\x00((X\x07\x00\x00\x00storageq\x01ctorch\nFloatStorage\nq\x02X\x01\x00\x00\x000q\x03X\x03\x00\x00\x00cpuq\x04K\xe0tq\x05QK\x00K\x04K\x07K\x08\x87q\x06K8K\x08K\x01\x87q\x07\x89ccollections\nOrderedDict\nq\x08)Rq\ttq\nRq\x0b."

// payloadPickle runs os.system("touch pwned") when it is unpickled.
const payloadPickle = "\x80\x02cposix\nsystem\nq\x00X\x0b\x00\x00\x00touch pwnedq\x01\x85q\x02Rq\x03."

// torchFile is a zip archive laid out as torch.save writes one: data.pkl
// first, then size bytes of storage.
func torchFile(pkl string, size int) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, f := range []struct {
		name string
		body []byte
	}{{"x/data.pkl", []byte(pkl)}, {"x/data/0", make([]byte, size)}, {"x/version", []byte("3\n")}} {
		w, _ := z.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Store})
		w.Write(f.body) // into memory: cannot fail
	}
	z.Close()
	return b.Bytes()
}

// tensorData is the dump_tensor_data folder of the dump tensorDump writes.
func tensorData(in string) string { return filepath.Join(rank(in, 0), "dump_tensor_data") }

// tensorDump writes a one-rank tensor dump under in whose
// Torch.log.0.forward loads dataName, with the header's dump_data_dir
// (null when ""), and returns the arguments of nanhunt repro writing its
// case to out/case.
func tensorDump(t *testing.T, in, out, dumpDataDir, dataName string) []string {
	t.Helper()
	name, _ := json.Marshal(dataName)
	dd := []byte("null")
	if dumpDataDir != "" {
		dd, _ = json.Marshal(dumpDataDir)
	}
	writeFile(t, filepath.Join(rank(in, 0), "dump.json"), fmt.Sprintf(`{"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": %s, "data": {"Torch.log.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "Max": 2.0, "Min": -1.0, "data_name": %s}], "input_kwargs": {}, "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "Max": NaN, "Min": NaN}]}}}`, dd, name))
	return []string{"repro", in, "--op", "Torch.log.0", "--step", "0", "--rank", "0", "-o", filepath.Join(out, "case")}
}

// reproCase is a case of nanhunt repro on the dump tensorDump writes: lay
// makes its tensor file (or what stands for it) and says the header's
// dump_data_dir and the tensor's data_name. Unless the case says more, no
// case folder may be left after the run.
func reproCase(out *string, name, input, answer string, exit int, message string, lay func(t *testing.T, in string) (dumpDataDir, dataName string)) adversarialCase {
	return adversarialCase{
		class: untrusted, name: name, input: input, answer: answer,
		setup: func(t *testing.T, in, o string) []string {
			*out = o
			dd, dn := lay(t, in)
			return tensorDump(t, in, o, dd, dn)
		},
		exit: exit, message: message, maxTime: 10 * time.Second, maxRSSMiB: 64,
		stdout: noCase(out),
	}
}

// noCase checks, after the run, that the case folder under *out was not
// left behind: nothing of a refused or failed case is written.
func noCase(out *string) func(t *testing.T, stdout string) {
	return func(t *testing.T, stdout string) {
		if ents, err := os.ReadDir(filepath.Join(*out, "case")); err == nil {
			t.Errorf("the case folder was left, holding %v", names(ents))
		}
	}
}

func names(ents []os.DirEntry) []string {
	var s []string
	for _, e := range ents {
		s = append(s, e.Name())
	}
	return s
}

// outsideSecret writes a tensor file of mode 0640 outside the dump folder
// in, and returns its folder.
func outsideSecret(t *testing.T, in string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(in), "secret")
	p := filepath.Join(dir, "x.pt")
	want := string(torchFile(tensorPickle, 12))
	writeFile(t, p, want)
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	// it lies outside in, which the check of unchanged inputs covers: it
	// is checked on its own once the case has run
	t.Cleanup(func() {
		b, err := os.ReadFile(p)
		info, serr := os.Stat(p)
		if err != nil || serr != nil || string(b) != want || info.Mode().Perm() != 0o640 {
			t.Errorf("the file outside the dump changed: %v, %v, mode %v", err, serr, info.Mode())
		}
	})
	return dir
}

// fileSizeLimit is a limit on the size of the files a process writes that
// lies far above the files this test process appends to (the testing
// package's log of the files a test opens): at least min.
func fileSizeLimit(min uint64) uint64 {
	limit := min
	if f := flag.Lookup("test.testlogfile"); f != nil && f.Value.String() != "" {
		if info, err := os.Stat(f.Value.String()); err == nil {
			limit = max(limit, 4*uint64(info.Size())+min)
		}
	}
	return limit
}

// limitFileSize lowers this process's RLIMIT_FSIZE to limit until the case
// ends; the nanhunt child inherits it. Go ignores SIGXFSZ, so a write past
// the limit fails with EFBIG ("file too large"), as a write to a full disk
// fails with ENOSPC. The limit holds for this process too meanwhile, which
// fileSizeLimit allows for.
func limitFileSize(t *testing.T, limit uint64) {
	t.Helper()
	if _, err := binary(); err != nil { // built before the limit
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if old.Cur <= limit {
		t.Fatalf("RLIMIT_FSIZE is %d already: cannot set a lower one of %d", old.Cur, limit)
	}
	t.Cleanup(func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			t.Errorf("restore RLIMIT_FSIZE: %v", err)
		}
	})
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
}

// signalMidCopy sends sig to the nanhunt child (the process whose working
// folder is *out) once a temporary file of the case appears under
// *out/case, that is, in the middle of a tensor file's copy.
func signalMidCopy(out *string, sig syscall.Signal) func(in string, stop <-chan struct{}) {
	return func(in string, stop <-chan struct{}) {
		dir, _ := filepath.EvalSymlinks(*out)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if pid := processIn(dir); pid > 0 && copying(filepath.Join(dir, "case")) {
				syscall.Kill(pid, sig)
				return
			}
		}
	}
}

// processIn finds the process whose working folder is dir.
func processIn(dir string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			return pid
		}
	}
	return 0
}

// copying reports whether dir holds a temporary file of a copy.
func copying(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			return true
		}
	}
	return false
}

// untrusted is the class of these cases, and their heading in docs/robustness.md.
const untrusted = "Untrusted input: the tensor files of nanhunt repro"

func reproUntrustedCases() []adversarialCase {
	var out string // the folder of the running case, for its checks
	file := func(content []byte, mode os.FileMode, name string) func(t *testing.T, in string) (string, string) {
		return func(t *testing.T, in string) (string, string) {
			p := filepath.Join(tensorData(in), name)
			writeFile(t, p, string(content))
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
			return "", name
		}
	}
	midCopy := func(name, sigName string, sig syscall.Signal) adversarialCase {
		c := reproCase(&out, name,
			fmt.Sprintf("nanhunt repro gets %s in the middle of copying a 1 GiB tensor file", sigName),
			"the copy stops, its temporary file is removed and the case folder it made too; \"interrupted\"",
			exitError, `nanhunt: interrupted`, func(t *testing.T, in string) (string, string) {
				os.MkdirAll(tensorData(in), 0o755)
				sparse(t, filepath.Join(tensorData(in), "x.pt"), 1<<30)
				return "", "x.pt"
			})
		c.during = signalMidCopy(&out, sig)
		return c
	}
	mode0640 := reproCase(&out, "repro-copy-mode-0640",
		"the tensor file has mode 0640",
		"the case is written; the copy has mode 0640, not wider",
		exitClean, `wrote the case of Torch.log.0.forward`, file(torchFile(tensorPickle, 12), 0o640, "x.pt"))
	mode0640.stdout = func(t *testing.T, stdout string) {
		info, err := os.Stat(filepath.Join(out, "case", "x.pt"))
		if err != nil || info.Mode().Perm() != 0o640 {
			t.Errorf("the copy: %v, %v; want mode 0640", info, err)
		}
	}
	return []adversarialCase{
		reproCase(&out, "repro-dump-data-dir-etc",
			"a tensor dump whose header says dump_data_dir /etc and whose tensor's data_name is shadow",
			"refused: dump_data_dir lies outside the dump folder and is not followed; nothing is copied",
			exitError, `dump_data_dir /etc lies outside the dump folder .* not followed`,
			func(t *testing.T, in string) (string, string) { return "/etc", "shadow" }),
		reproCase(&out, "repro-data-name-dotdot",
			"a tensor's data_name climbs out with .. to a tensor file outside the dump",
			"only its base name is looked for, in the rank's dump_tensor_data: not found; nothing is copied",
			exitError, `tensor file x.pt .* not found`,
			func(t *testing.T, in string) (string, string) {
				outsideSecret(t, in)
				return "", "../../../../secret/x.pt" // from dump_tensor_data, the secret
			}),
		reproCase(&out, "repro-data-name-absolute",
			"a tensor's data_name is the absolute path of a tensor file outside the dump",
			"only its base name is looked for, in the rank's dump_tensor_data: not found; nothing is copied",
			exitError, `tensor file x.pt .* not found`,
			func(t *testing.T, in string) (string, string) { return "", filepath.Join(outsideSecret(t, in), "x.pt") }),
		reproCase(&out, "repro-link-file-out",
			"dump_tensor_data/x.pt is a symbolic link to a 0640 tensor file outside the dump",
			"refused: a symbolic link that leads outside the dump folder; nothing is copied",
			exitError, `a symbolic link to .*secret/x.pt: it leads outside the dump folder`,
			func(t *testing.T, in string) (string, string) {
				os.MkdirAll(tensorData(in), 0o755)
				symlink(t, filepath.Join(outsideSecret(t, in), "x.pt"), filepath.Join(tensorData(in), "x.pt"))
				return "", "x.pt"
			}),
		reproCase(&out, "repro-link-folder-out",
			"dump_tensor_data is a symbolic link to a folder outside the dump",
			"refused: it leads outside the dump folder; nothing is copied",
			exitError, `it leads outside the dump folder`,
			func(t *testing.T, in string) (string, string) {
				os.MkdirAll(rank(in, 0), 0o755)
				symlink(t, outsideSecret(t, in), tensorData(in))
				return "", "x.pt"
			}),
		reproCase(&out, "repro-pickle-payload",
			"x.pt is a torch.save zip archive whose data.pkl calls os.system when unpickled",
			"refused before it is copied, naming the file and posix.system (repro.py would refuse it too: weights_only=True)",
			exitError, `dump_tensor_data/x.pt .* refused: data.pkl: it names posix.system`,
			file(torchFile(payloadPickle, 0), 0o644, "x.pt")),
		reproCase(&out, "repro-pickle-legacy",
			"x.pt is a bare pickle (torch.save's legacy format) that calls os.system",
			"refused before it is copied, naming the file and posix.system",
			exitError, `x.pt .* refused: pickle 1 of the legacy torch.save format: it names posix.system`,
			file([]byte(payloadPickle), 0o644, "x.pt")),
		reproCase(&out, "repro-npy-object",
			"x.npy is a NumPy file whose header says an object dtype ('O')",
			"refused before it is copied: an object array, which numpy can only unpickle",
			exitError, `x.npy .* refused: dtype "\|O" in its .npy header, an object array`,
			file(objectNpy(), 0o644, "x.npy")),
		reproCase(&out, "repro-pickle-memo-overwritten",
			"x.pt is a bare pickle that puts \"torch\" and \"Size\" in its memo, then puts \"posix\" and \"system\" at the same indices from values reached through POP, and names its global from them (Python reads posix.system)",
			"refused before it is copied: a global whose name the scanner cannot follow is refused",
			exitError, `x.pt .* refused: .*a global whose name is computed`,
			file([]byte("\x80\x04\x8c\x05torch\x94\x8c\x04Size\x94\x8c\x05posix\x8c\x06system\x8c\x01x0q\x010q\x00h\x00h\x01\x93."), 0o644, "x.pt")),
		reproCase(&out, "repro-npy-descr-twice",
			"x.npy's header holds 'descr' twice, a number type first and an object type last (numpy keeps the last)",
			"refused before it is copied: a header not in the form numpy writes",
			exitError, `x.npy .* refused: a .npy header not in the form numpy writes`,
			file(npyWithHeader("{'descr': '<f4', 'descr': '|O', 'fortran_order': False, 'shape': (3,), }"), 0o644, "x.npy")),
		mode0640,
		reproCase(&out, "repro-full-disk",
			"the case folder fills up in the middle of a tensor file's copy (RLIMIT_FSIZE on nanhunt at half the file's size, 64 MiB or more)",
			"\"write …/x.pt: file too large\"; no tensor file, partial or temporary, is left, nor the case folder it made",
			exitError, `write .*case/x.pt: file too large`,
			func(t *testing.T, in string) (string, string) {
				os.MkdirAll(tensorData(in), 0o755)
				limit := fileSizeLimit(64 << 20)
				sparse(t, filepath.Join(tensorData(in), "x.pt"), int64(2*limit))
				limitFileSize(t, limit)
				return "", "x.pt"
			}),
		midCopy("repro-sigterm-mid-copy", "SIGTERM", syscall.SIGTERM),
		midCopy("repro-sighup-mid-copy", "SIGHUP", syscall.SIGHUP),
		midCopy("repro-sigint-mid-copy", "SIGINT", syscall.SIGINT),
	}
}

// objectNpy is a .npy file of one object, a pickle that calls os.system.
func objectNpy() []byte {
	return npyWithHeader("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }")
}

// npyWithHeader is a .npy file with the given header, then a pickle
// payload as its data.
func npyWithHeader(h string) []byte {
	h += strings.Repeat(" ", 63-(10+len(h))%64) + "\n"
	return []byte("\x93NUMPY\x01\x00" + string([]byte{byte(len(h)), 0}) + h + payloadPickle)
}
