package robustness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary builds the nanhunt command once for all cases.
var binary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "nanhunt-robustness")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "nanhunt")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/nanhunt/nanhunt/cmd/nanhunt")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// outcome is what one run of the binary did.
type outcome struct {
	code           int
	stdout, stderr string
	wall           time.Duration
	peakRSS        int64 // bytes
}

// runBinary runs nanhunt with args in dir, killing it after limit; with
// the case's fileLimitKiB no file it writes may grow past that size, and
// with its signal the child gets that signal once signalWhen holds.
func runBinary(t *testing.T, dir string, args []string, limit time.Duration, cred *syscall.Credential, c *adversarialCase) outcome {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	if c.fileLimitKiB > 0 {
		// a full disk, as far as the child can tell: writes past the
		// limit fail with EFBIG (Go ignores SIGXFSZ)
		script := fmt.Sprintf(`ulimit -f %d && exec "$0" "$@"`, c.fileLimitKiB)
		cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, bin}, args...)...)
	}
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GOGC=100"}, c.env...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err = cmd.Start(); err != nil {
		t.Fatalf("nanhunt %q: %v", args, err)
	}
	signalled := make(chan struct{})
	if c.signal != 0 {
		go signalWhen(cmd.Process, c, dir, signalled)
	}
	err = cmd.Wait()
	close(signalled)
	o := outcome{wall: time.Since(start), stdout: out.String(), stderr: errb.String()}
	if ctx.Err() != nil {
		t.Fatalf("nanhunt %q was still running after %v (killed)", args, limit)
	}
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("nanhunt %q: %v", args, err)
		}
	}
	o.code = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		o.peakRSS = ru.Maxrss << 10 // Linux reports KiB
	}
	return o
}

// treeSum is a checksum of everything under root: names, kinds, sizes,
// inodes, link targets and contents (the first and last MiB of a file
// bigger than 64 MiB, whose middle a sparse or generated file repeats).
func treeSum(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		var ino uint64
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
		fmt.Fprintf(h, "%s %v %d %d %d\n", rel, info.Mode(), info.Size(), info.ModTime().UnixNano(), ino)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			fmt.Fprintln(h, target)
		case info.Mode().IsRegular():
			return hashContent(h, path, info.Size())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("checksum of %s: %v", root, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func hashContent(h io.Writer, path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	const whole, part = 64 << 20, 1 << 20
	if size <= whole {
		_, err = io.Copy(h, f)
		return err
	}
	if _, err := io.CopyN(h, f, part); err != nil {
		return err
	}
	_, err = io.Copy(h, io.NewSectionReader(f, size-part, part))
	return err
}

// check asserts a case's outcome.
func (c *adversarialCase) check(t *testing.T, o outcome) {
	t.Helper()
	if o.code != c.exit {
		t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", o.code, c.exit, clip(o.stdout), clip(o.stderr))
	}
	if c.message != "" {
		re := regexp.MustCompile(c.message)
		if !re.MatchString(o.stdout) && !re.MatchString(o.stderr) {
			t.Errorf("no output matches %q\nstdout:\n%s\nstderr:\n%s", c.message, clip(o.stdout), clip(o.stderr))
		}
	}
	if o.wall > c.maxTime {
		t.Errorf("took %v, want at most %v", o.wall.Round(time.Millisecond), c.maxTime)
	}
	if o.peakRSS > int64(c.maxRSSMiB)<<20 {
		t.Errorf("peak RSS %.1f MiB, want at most %d MiB", float64(o.peakRSS)/(1<<20), c.maxRSSMiB)
	}
	if c.stdout != nil {
		c.stdout(t, o.stdout)
	}
}

func clip(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "…"
	}
	return s
}

// signalWhen sends the case's signal to p once its condition holds on the
// child's folder, checking every few milliseconds until done is closed.
func signalWhen(p *os.Process, c *adversarialCase, dir string, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-time.After(2 * time.Millisecond):
		}
		if c.signalWhen(dir) {
			p.Signal(c.signal)
			return
		}
	}
}
