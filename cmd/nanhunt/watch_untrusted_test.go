package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/internal/watch"
	"github.com/nanhunt/nanhunt/verdict"
)

// hostileOp is the name log-negative's origin op is given: a NUL, an
// escape sequence that clears the screen and a line break.
const hostileOp = `Torch.log\u0000\u001b[2J\n.0.forward`

// hostileRun is log-negative with its origin op renamed hostileOp in
// every file of the dump.
func hostileRun(t *testing.T) string {
	t.Helper()
	dir := finishedRun(t, "log-negative")
	files, _ := filepath.Glob(filepath.Join(dir, "step*", "rank*", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(strings.ReplaceAll(string(b), "Torch.log.0.forward", hostileOp)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// An op name holding a NUL and control characters does not keep the hook
// from running: NANHUNT_OP holds it escaped as the text report prints it,
// and no raw control character reaches the terminal.
func TestWatchHookEnvEscapesNames(t *testing.T) {
	dir := hostileRun(t)
	work := t.TempDir()
	envFile := filepath.Join(work, "env")
	stdout, stderr, code := runCLI(t, append([]string{"watch", dir, "-o", filepath.Join(work, "alarms"), "--exit-on-anomaly",
		"--on-anomaly", "printf '%s' \"$NANHUNT_OP\" > " + envFile}, fastWatch...)...)
	if code != exitAnomaly {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	op, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("the hook did not run: %v\n%s", err, stderr)
	}
	if want := `Torch.log\x00\x1b[2J\n.0.forward`; string(op) != want {
		t.Errorf("NANHUNT_OP=%q, want %q", op, want)
	}
	if strings.ContainsAny(stdout, "\x00\x1b") {
		t.Errorf("a raw control character from the dump reached the terminal:\n%q", stdout)
	}
	if !strings.Contains(stdout, `step 2: NaN on rank 2 at Torch.log\x00\x1b[2J\n.0.forward; reading the next dumped step`) {
		t.Errorf("the suspect line does not name the op escaped:\n%s", stdout)
	}
}

// A --state that is not a regular file is refused at once, naming it,
// and the watch leaves nothing behind.
func TestWatchStateNotRegular(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	work := t.TempDir()
	fifo := filepath.Join(work, "state.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{fifo, work, "/dev/null"} {
		outDir := filepath.Join(work, "alarms")
		start := time.Now()
		_, stderr, code := runCLI(t, append([]string{"watch", dir, "-o", outDir, "--state", state}, fastWatch...)...)
		if code != exitError || !strings.Contains(stderr, "--state "+state+": ") || !strings.Contains(stderr, "not a regular file") {
			t.Errorf("--state %s: exit %d, stderr %q; want 2 naming it", state, code, stderr)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("--state %s: refused after %v", state, d)
		}
		if _, err := os.Stat(outDir); err == nil {
			t.Errorf("--state %s: the refused watch left %s", state, outDir)
		}
	}
}

// A second watch on an output folder or a state file that a watch holds
// is refused at once, naming the lock and its process.
func TestWatchSecondWatchRefused(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	work := t.TempDir()
	held, state := filepath.Join(work, "held"), filepath.Join(work, "watch.json")
	if err := os.Mkdir(held, 0o755); err != nil {
		t.Fatal(err)
	}
	outLock, err := watch.LockOut(held)
	if err != nil {
		t.Fatal(err)
	}
	defer outLock.Release()
	stateLock, err := watch.LockState(state)
	if err != nil {
		t.Fatal(err)
	}
	defer stateLock.Release()
	pid := " (process " + strconv.Itoa(os.Getpid()) + ")"
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"out", []string{"-o", held}, "-o " + held + ": another watch holds its lock " + filepath.Join(held, "watch.lock") + pid},
		{"state", []string{"-o", filepath.Join(work, "free"), "--state", state}, "--state " + state + ": another watch holds its lock " + state + ".lock" + pid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, append(append([]string{"watch", dir, "--exit-on-anomaly"}, fastWatch...), tt.args...)...)
			if code != exitError || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(work, "free")); err == nil {
		t.Errorf("the refused watch left the output folder it made")
	}
	if _, err := os.Stat(state); err == nil {
		t.Errorf("the refused watch wrote the state")
	}
}

// A file of the alarm that cannot be written does not keep the alarm, the
// other file or the hook: the alarm is the answer (exit 1), the file is
// named on stderr as not written and nowhere else — not in the text, not
// in the JSON line, not in the hook's environment.
func TestWatchAlarmFileNotWritten(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	for _, format := range []string{"text", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			work := t.TempDir()
			outDir, envFile := filepath.Join(work, "alarms"), filepath.Join(work, "env")
			blocked := filepath.Join(outDir, "verdict-step2.json")
			if err := os.MkdirAll(blocked, 0o755); err != nil { // a folder where the verdict goes
				t.Fatal(err)
			}
			stdout, stderr, code := runCLI(t, append([]string{"watch", dir, "-o", outDir, "--exit-on-anomaly", "--format", format,
				"--on-anomaly", "env | grep ^NANHUNT_ > " + envFile}, fastWatch...)...)
			if code != exitAnomaly {
				t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
			}
			if want := "nanhunt: -o " + blocked + " was not written: write " + blocked + ": it is a folder\n"; !strings.Contains(stderr, want) {
				t.Errorf("stderr %q lacks %q", stderr, want)
			}
			if format == "text" && strings.Contains(stdout, "verdict-step2.json") || strings.Contains(stdout, `"verdict":`) {
				t.Errorf("stdout names the verdict that was not written as written:\n%s", stdout)
			}
			html := filepath.Join(outDir, "report-step2.html")
			if _, err := os.Stat(html); err != nil || !strings.Contains(stdout, html) {
				t.Errorf("the page was not written or not named: %v\n%s", err, stdout)
			}
			if format == "jsonl" && !strings.Contains(stdout, `"not_written":["`+blocked+`"]`) {
				t.Errorf("the anomaly event does not list the verdict as not written:\n%s", stdout)
			}
			env, err := os.ReadFile(envFile)
			if err != nil {
				t.Fatalf("the hook did not run: %v", err)
			}
			if !strings.Contains(string(env), "NANHUNT_VERDICT=\n") || !strings.Contains(string(env), "NANHUNT_HTML="+html+"\n") {
				t.Errorf("the hook's environment:\n%s", env)
			}
		})
	}
}

// A hook that fails after the alarm is named on stderr; the alarm stays
// the answer (exit 1).
func TestWatchHookFailsAfterTheAlarm(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	_, stderr, code := runCLI(t, append([]string{"watch", dir, "-o", filepath.Join(t.TempDir(), "alarms"), "--exit-on-anomaly",
		"--on-anomaly", "exit 7"}, fastWatch...)...)
	if code != exitAnomaly || !strings.Contains(stderr, `nanhunt: --on-anomaly "exit 7": exit status 7`) {
		t.Errorf("exit %d, stderr %q; want 1 and the hook's failure", code, stderr)
	}
}

// How a watch ends: without an alarm a failure is the answer (exit 2, the
// error returned); once the alarm was raised it is the answer (exit 1),
// and what failed besides is named on stderr.
func TestWatchFinish(t *testing.T) {
	saveErr := &watch.SaveError{File: "/s/watch.json", Err: errors.New("no space left on device")}
	alarm := &verdict.Verdict{Anomaly: true}
	for _, tc := range []struct {
		name       string
		res        watch.Result
		err        error
		wantErr    string // "": none
		wantStderr string
		wantCode   int
	}{
		{"clean", watch.Result{Complete: true}, nil, "", "", exitClean},
		{"incomplete", watch.Result{}, nil, "", "", exitIncomplete},
		{"state not saved", watch.Result{Complete: true}, saveErr, "--state /s/watch.json was not written: no space left on device", "", exitClean},
		{"alarm", watch.Result{Alarm: alarm}, nil, "", "", exitAnomaly},
		{"alarm, state not saved", watch.Result{Alarm: alarm}, saveErr, "", "nanhunt: --state /s/watch.json was not written: no space left on device\n", exitAnomaly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := exitClean
			var stderr strings.Builder
			cmd := &cobra.Command{}
			cmd.SetErr(&stderr)
			cmd.SetContext(withExitCode(context.Background(), &code))
			p := &watchPrinter{cmd: cmd, f: &watchFlags{}}
			err := p.finish(tc.res, tc.err)
			if got := fmt.Sprint(err); tc.wantErr == "" && err != nil || tc.wantErr != "" && got != tc.wantErr {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if stderr.String() != tc.wantStderr || code != tc.wantCode {
				t.Errorf("stderr %q, exit %d; want %q, %d", stderr.String(), code, tc.wantStderr, tc.wantCode)
			}
		})
	}
}
