package trace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/verdict"
)

// copyRun copies steps of a real scenario to a temporary folder.
func copyRun(t *testing.T, src string, steps ...string) string {
	t.Helper()
	dst := t.TempDir()
	for _, step := range steps {
		err := filepath.WalkDir(filepath.Join(src, step), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func truncate(t *testing.T, file string, at string) int64 {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), at)
	if i < 0 {
		t.Fatalf("%q not in %s", at, file)
	}
	if err := os.WriteFile(file, data[:i+len(at)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	return int64(i + len(at)/2)
}

func TestDamageAfterTheOrigin(t *testing.T) {
	src := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	run := copyRun(t, src, "step4", "step5")
	dumpFile := filepath.Join(run, "step5", "rank2", "dump.json")
	cut := truncate(t, dumpFile, `"Tensor.div_.7.forward"`)
	v, err := Run(context.Background(), Options{Path: run})
	if err != nil {
		t.Fatal(err)
	}
	o := v.Origin
	if o == nil || o.Op != "Torch.sqrt.0.backward" || o.Confidence != "medium" {
		t.Fatalf("origin = %+v, want the sqrt backward with medium confidence", o)
	}
	var w *verdict.Warning
	for i := range v.Warnings {
		if v.Warnings[i].File == dumpFile {
			w = &v.Warnings[i]
		}
	}
	if w == nil || w.Offset == nil || *w.Offset != cut || !strings.Contains(w.Message, "ends early") {
		t.Errorf("warning = %+v, want the file and offset %d of the damage", w, cut)
	}
}

func TestDamageBeforeTheOrigin(t *testing.T) {
	src := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	run := copyRun(t, src, "step5")
	truncate(t, filepath.Join(run, "step5", "rank2", "dump.json"), `"Functional.pad.0.backward"`)
	v, err := Run(context.Background(), Options{Path: run})
	if err != nil {
		t.Fatal(err)
	}
	o := v.Origin
	if o == nil || o.Captured || !o.Unread || !equalInts(o.Ranks, []int{2}) || o.Confidence != "low" {
		t.Fatalf("origin = %+v, want rank 2 (its dump was cut before the origin), not captured, low", o)
	}
	if c := v.Carrier; c == nil || len(c.FromRanks) != 0 || !equalInts(c.Unread, []int{2}) || !equalInts(c.ToRanks, []int{0, 1, 3}) {
		t.Errorf("carrier = %+v, want the all_reduce with rank 2 unread", c)
	}
}

func TestMissingSideFiles(t *testing.T) {
	src := filepath.Join(fixtures(t), "msprobe-generated", "fwd-log-neg-rank2-step5", "mix")
	run := copyRun(t, src, "step5")
	os.Remove(filepath.Join(run, "step5", "rank2", "stack.json"))
	os.Remove(filepath.Join(run, "step5", "rank2", "construct.json"))
	v, err := Run(context.Background(), Options{Path: run})
	if err != nil {
		t.Fatal(err)
	}
	o := v.Origin
	if o == nil || o.Op != "Torch.log.0.forward" || o.Code != nil || len(o.Chain) != 0 {
		t.Fatalf("origin = %+v, want the log call without code or chain", o)
	}
	msgs := ""
	for _, w := range v.Warnings {
		msgs += w.Message + "\n"
	}
	if !strings.Contains(msgs, "no stack.json") || !strings.Contains(msgs, "no construct.json") {
		t.Errorf("warnings = %s", msgs)
	}
	// A damaged stack.json: the code line is still found when it comes
	// before the damage.
	run = copyRun(t, src, "step5")
	stack := filepath.Join(run, "step5", "rank2", "stack.json")
	data, _ := os.ReadFile(stack)
	os.WriteFile(stack, data[:len(data)*3/4], 0o644)
	v, err = Run(context.Background(), Options{Path: run})
	if err != nil {
		t.Fatal(err)
	}
	if v.Origin.Code == nil || v.Origin.Code.Line != 49 {
		t.Errorf("code = %+v, want line 49 read before the damage", v.Origin.Code)
	}
}

func TestGarbageFilesAreWarnings(t *testing.T) {
	src := filepath.Join(fixtures(t), "msprobe-generated", "fwd-log-neg-rank2-step5", "L1")
	run := copyRun(t, src, "step4", "step5")
	os.WriteFile(filepath.Join(run, "step4", "rank1", "dump.json"), []byte("\x00\x01garbage"), 0o644)
	v, err := Run(context.Background(), Options{Path: run})
	if err != nil {
		t.Fatal(err)
	}
	if v.Origin == nil || v.Origin.Op != "Torch.log.0.forward" {
		t.Fatalf("origin = %+v", v.Origin)
	}
	found := false
	for _, w := range v.Warnings {
		found = found || (strings.HasSuffix(w.File, filepath.Join("step4", "rank1", "dump.json")) && w.Offset != nil && *w.Offset == 0)
	}
	if !found {
		t.Errorf("no warning names the garbage file at offset 0: %+v", v.Warnings)
	}
	// Nothing readable at all is an error.
	for _, d := range []string{"step4", "step5"} {
		for r := 0; r < 4; r++ {
			os.WriteFile(filepath.Join(run, d, "rank"+string(rune('0'+r)), "dump.json"), []byte("]"), 0o644)
		}
	}
	if _, err := Run(context.Background(), Options{Path: run}); err == nil {
		t.Error("a dump with no readable file gave a verdict")
	}
}

func TestCancel(t *testing.T) {
	src := filepath.Join(fixtures(t), "msprobe-generated", "fwd-log-neg-rank2-step5", "L1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Options{Path: src}); err == nil {
		t.Error("a cancelled run gave a verdict")
	}
}

// The scan reads no file past what the answer needs: the first anomalous
// step, and the next one until an anomaly shows that it lasts.
func TestEarlyExitReadsNothingLater(t *testing.T) {
	src := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	run := copyRun(t, src, "step4", "step5", "step6", "step7")
	for r := 0; r < 4; r++ {
		// anything that reads these fails loudly
		p := filepath.Join(run, "step7", "rank"+string(rune('0'+r)), "dump.json")
		if err := os.WriteFile(p, []byte("\x00not json"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var read int64
	v, err := Run(context.Background(), Options{Path: run, Progress: func(p Progress) { read = p.BytesRead }})
	if err != nil {
		t.Fatal(err)
	}
	if v.Origin == nil || v.Origin.Step != 5 {
		t.Fatalf("origin = %+v", v.Origin)
	}
	for _, w := range v.Warnings {
		if strings.Contains(w.File, "step7") {
			t.Errorf("step 7 was read: %+v", w)
		}
	}
	if !equalInts(v.Scanned.NotScanned, []int{7}) || v.Scanned.CheckedNext == nil || *v.Scanned.CheckedNext != 6 {
		t.Errorf("scanned %+v", v.Scanned)
	}
	// steps 4 and 5 are read once by the byte search, step 5 (flagged) is
	// walked again; step 6 only until its first anomaly
	var steps45 int64
	for _, step := range []string{"step4", "step5"} {
		files, _ := filepath.Glob(filepath.Join(run, step, "rank*", "dump.json"))
		for _, f := range files {
			info, _ := os.Stat(f)
			steps45 += info.Size()
		}
	}
	if read <= steps45 || read > 3*steps45 {
		t.Errorf("read %d bytes; steps 4-5 hold %d", read, steps45)
	}
}

// A dump.json that is a FIFO without a writer, or a link to /dev/zero, is
// refused at once: the rank is unread, and the analysis does not hang.
func TestFilesThatAreNotRegular(t *testing.T) {
	mul := []string{call("Torch.mul.0.forward", list(tensorFinite), list(tensorFinite))}
	root := layDump(t, map[int]map[int][]string{0: {0: mul, 1: mul, 2: mul}})
	if err := os.Remove(filepath.Join(root, "step0", "rank1", "dump.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "step0", "rank1", "dump.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "step0", "rank2", "dump.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(root, "step0", "rank2", "dump.json")); err != nil {
		t.Fatal(err)
	}
	done := make(chan *verdict.Verdict, 1)
	go func() { done <- runOn(t, root) }()
	select {
	case v := <-done:
		var msgs []string
		for _, w := range v.Warnings {
			msgs = append(msgs, w.Message)
		}
		all := strings.Join(msgs, "\n")
		for _, want := range []string{"a named pipe (FIFO), not a regular file", "a character device, not a regular file"} {
			if !strings.Contains(all, want) {
				t.Errorf("no warning %q in:\n%s", want, all)
			}
		}
		if v.Anomaly {
			t.Errorf("anomaly in a clean run: %+v", v.Origin)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the analysis hangs on a FIFO or /dev/zero")
	}
}
