package robustness

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cases of nanhunt watch on untrusted input and in a hostile place: names
// that would stop the hook, a --state that is a named pipe or garbage, a
// disk that fills up at the alarm, a second watch on the same folder and
// state, and the signals that stop a watch.

// nulName is an op name holding a NUL, a terminal title sequence, a CR and
// a line break, as JSON escapes them.
const nulName = `Torch.sqrt\u0000\u001b]0;pwned\u0007\r\n.0.forward`

// nulNameEscaped is nulName as the text report prints it.
const nulNameEscaped = `Torch.sqrt\x00\x1b]0;pwned\x07\r\n.0.forward`

// watchUntrustedBound are the bounds of these cases.
const watchUntrustedBound, watchUntrustedRSS = 10 * time.Second, 64

// hookRecord is a hook that appends what it was given to out/hook.log,
// one line per run: [NANHUNT_OP][NANHUNT_VERDICT][NANHUNT_HTML].
const hookRecord = `printf '[%s][%s][%s]\n' "$NANHUNT_OP" "$NANHUNT_VERDICT" "$NANHUNT_HTML" >> hook.log`

// hookRuns reads out/hook.log: a line per run of the hook.
func hookRuns(t *testing.T, out string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "hook.log"))
	if err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// noWatchLeftovers checks that a watch that ended left no temporary file
// and no lock file under out.
func noWatchLeftovers(t *testing.T, out string) {
	t.Helper()
	if l := leftovers(t, out, ".lock"); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
}

// stateWhole reads the watch state under out: whole JSON with next_step.
func stateWhole(t *testing.T, out string, next int) {
	t.Helper()
	if got := stateNext(t, filepath.Join(out, "state.json")); got != next {
		t.Errorf("the state says next_step %d, want %d", got, next)
	}
}

// stateAt reports whether the watch state under out has got to next_step.
func stateAt(out string, next int) bool {
	b, err := os.ReadFile(filepath.Join(out, "state.json"))
	if err != nil {
		return false
	}
	var st struct {
		Next int `json:"next_step"`
	}
	return json.Unmarshal(b, &st) == nil && st.Next >= next
}

// endlessWatch are the arguments of a watch of in that ends only when it
// is stopped (no --idle-exit), keeping its state in out/state.json.
func endlessWatch(in, out string, more ...string) []string {
	return append([]string{"watch", in, "-o", filepath.Join(out, "alarms"), "--state", filepath.Join(out, "state.json"),
		"--settle", "50ms", "--poll", "20ms", "--rank-timeout", "300ms", "--nice", "0"}, more...)
}

func watchUntrustedCases() []adversarialCase {
	return append(append(watchNameAndStateCases(), watchOutputCases()...), watchSignalCases()...)
}

// watchNameAndStateCases: a name that would stop the hook, a --state that
// would block or is not a state.
func watchNameAndStateCases() []adversarialCase {
	return []adversarialCase{
		{
			class: "untrusted input", name: "watch-hook-nul-name",
			input:  "nanhunt watch --on-anomaly over a dump whose origin op name holds a NUL, ESC]0;… (retitle), BEL, CR and LF",
			answer: "the alarm, and the hook runs: NANHUNT_OP holds the name escaped as the text report prints it; no raw control character on stdout",
			setup: func(t *testing.T, in, out string) []string {
				writeNamedDump(t, in, nulName)
				return watchArgs(in, out, "--exit-on-anomaly", "--on-anomaly", hookRecord)
			},
			exit: exitAnomaly, message: `step 0: ANOMALY`, maxTime: watchUntrustedBound, maxRSSMiB: watchUntrustedRSS,
			stdout: func(t *testing.T, stdout string) {
				if strings.ContainsAny(stdout, "\x00\x1b\x07\r") {
					t.Errorf("a raw control character from the dump reached stdout:\n%q", clip(stdout))
				}
			},
			after: func(t *testing.T, out string) {
				verdict := filepath.Join(out, "alarms", "verdict-step0.json")
				want := "[" + nulNameEscaped + "][" + verdict + "][" + filepath.Join(out, "alarms", "report-step0.html") + "]"
				if runs := hookRuns(t, out); len(runs) != 1 || runs[0] != want {
					t.Errorf("the hook was given %q, want once %q", runs, want)
				}
				verdictFile(t, verdict)
			},
		},
		stateCase("watch-state-fifo", "a named pipe that no one writes",
			"refused at once, naming --state and what it is; no output folder is left",
			`--state .*state\.json: a named pipe \(FIFO\), not a regular file`,
			func(t *testing.T, state string) { mkfifo(t, state) }),
		stateCase("watch-state-device", "/dev/zero through a symbolic link",
			"refused at once: a character device, not a regular file",
			`--state .*state\.json: a character device, not a regular file`,
			func(t *testing.T, state string) { symlink(t, "/dev/zero", state) }),
		stateCase("watch-state-not-a-state", "a file of 1 MiB of nested arrays",
			"refused at its first token: not a watch state (an array, not a JSON object); no output folder or lock is left",
			`state\.json: not a watch state: an array, not a JSON object`,
			func(t *testing.T, state string) { writeFile(t, state, strings.Repeat("[", 1<<20)) }),
	}
}

// stateCase is a watch of a clean dump whose --state (out/state.json) lay
// makes, and which must be refused at once, leaving no output folder, lock
// or temporary file.
func stateCase(name, state, answer, message string, lay func(t *testing.T, state string)) adversarialCase {
	return adversarialCase{
		class: "untrusted input", name: name,
		input: "nanhunt watch --state naming " + state, answer: answer,
		setup: func(t *testing.T, in, out string) []string {
			fourCleanSteps(t, in)
			lay(t, filepath.Join(out, "state.json"))
			return endlessWatch(in, out)
		},
		exit: exitError, message: message, maxTime: watchUntrustedBound, maxRSSMiB: watchUntrustedRSS,
		after: func(t *testing.T, out string) {
			noAlarmsFolder(t, out)
			noWatchLeftovers(t, out)
		},
	}
}

// noAlarmsFolder checks that a refused watch left no output folder.
func noAlarmsFolder(t *testing.T, out string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(out, "alarms")); err == nil {
		t.Errorf("the refused watch left its output folder")
	}
}

// watchOutputCases: a disk that fills up at the alarm, and a second watch
// on the output folder and state of a running one.
func watchOutputCases() []adversarialCase {
	fullDisk := func(name, format string, stdout func(t *testing.T, stdout string)) adversarialCase {
		return adversarialCase{
			class: "untrusted input", name: name,
			input: "nanhunt watch --format " + format + " --on-anomaly at an anomaly, on a disk that is full for any file over 512 bytes (the verdict, the page)",
			answer: "exit 1: the alarm stands and the hook runs, given NANHUNT_VERDICT and NANHUNT_HTML empty; each file is named on stderr as not written; " +
				"nothing printed names it as written; no piece of either is left",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				return watchArgs(in, out, "--exit-on-anomaly", "--format", format, "--on-anomaly", hookRecord)
			},
			fileLimitKiB: 1,
			exit:         exitAnomaly, message: `-o .*verdict-step0\.json was not written: write .*verdict-step0\.json: file too large`,
			maxTime: watchUntrustedBound, maxRSSMiB: watchUntrustedRSS, stdout: stdout,
			after: func(t *testing.T, out string) {
				if runs := hookRuns(t, out); len(runs) != 1 || runs[0] != "[Torch.sqrt.0.forward][][]" {
					t.Errorf("the hook was given %q, want once [Torch.sqrt.0.forward][][]", runs)
				}
				if l := leftovers(t, out, ".json", ".html", ".lock"); len(l) > 0 {
					t.Errorf("left behind: %v", l)
				}
			},
		}
	}
	return []adversarialCase{
		fullDisk("watch-full-disk-alarm", "text", func(t *testing.T, stdout string) {
			if strings.Contains(stdout, "verdict:") || strings.Contains(stdout, "report:") {
				t.Errorf("stdout names a file that was not written:\n%s", clip(stdout))
			}
			if !strings.Contains(stdout, "step 0: ANOMALY, first seen by the dump\n\nnanhunt: the first NaN was born at step 0") {
				t.Errorf("no alarm on stdout:\n%s", clip(stdout))
			}
		}),
		fullDisk("watch-full-disk-alarm-jsonl", "jsonl", func(t *testing.T, stdout string) {
			for _, l := range strings.Split(stdout, "\n") {
				if strings.Contains(l, `"event":"anomaly"`) {
					if strings.Contains(l, `"verdict":`) || strings.Contains(l, `"html":`) || !strings.Contains(l, `"not_written":["`) {
						t.Errorf("the anomaly event names a file that was not written as written, or not as not written:\n%s", l)
					}
					return
				}
			}
			t.Errorf("no anomaly event:\n%s", clip(stdout))
		}),
		{
			class: "untrusted input", name: "watch-full-disk-page-only",
			input: "nanhunt watch --on-anomaly at an anomaly, on a disk that is full for any file over 64 KiB: the verdict fits, the page does not",
			answer: "exit 1: the verdict is written and named, the hook is given it and NANHUNT_HTML empty; the page is named on stderr as not written, " +
				"nowhere as written, and no piece of it is left",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				return watchArgs(in, out, "--exit-on-anomaly", "--on-anomaly", hookRecord)
			},
			fileLimitKiB: 64,
			exit:         exitAnomaly, message: `-o .*report-step0\.html was not written: .*file too large`,
			maxTime: watchUntrustedBound, maxRSSMiB: watchUntrustedRSS,
			stdout: func(t *testing.T, stdout string) {
				if !strings.Contains(stdout, "verdict: ") || strings.Contains(stdout, "report: ") {
					t.Errorf("stdout does not name the verdict alone as written:\n%s", clip(stdout))
				}
			},
			after: func(t *testing.T, out string) {
				verdict := filepath.Join(out, "alarms", "verdict-step0.json")
				verdictFile(t, verdict)
				if runs := hookRuns(t, out); len(runs) != 1 || runs[0] != "[Torch.sqrt.0.forward]["+verdict+"][]" {
					t.Errorf("the hook was given %q, want once [Torch.sqrt.0.forward][%s][]", runs, verdict)
				}
				if l := leftovers(t, out, ".html", ".lock"); len(l) > 0 {
					t.Errorf("left behind: %v", l)
				}
			},
		},
		{
			class: "untrusted input", name: "watch-second-watch",
			input:  "a second nanhunt watch --on-anomaly on the -o folder and --state of a running watch that has raised the alarm and goes on",
			answer: "the second is refused at once naming the lock and the first's process (exit 2); the hook ran once",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{steps: []string{"step0", "step1"}})
				args := endlessWatch(in, out, "--on-anomaly", hookRecord)
				firstWatch(t, out, args)
				return args
			},
			exit: exitError, message: `-o .*alarms: another watch holds its lock .*alarms/watch\.lock \(process [0-9]+\)`,
			maxTime: watchUntrustedBound, maxRSSMiB: watchUntrustedRSS,
			after: func(t *testing.T, out string) {
				if runs := hookRuns(t, out); len(runs) != 1 {
					t.Errorf("the hook ran %d times, want once", len(runs))
				}
			},
		},
		{
			class: "untrusted input", name: "watch-second-watch-state",
			input:  "the same, the second with another -o and the same --state",
			answer: "refused at once naming the state's lock (state.json.lock) and the first's process",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{steps: []string{"step0", "step1"}})
				firstWatch(t, out, endlessWatch(in, out, "--on-anomaly", hookRecord))
				args := endlessWatch(in, out, "--on-anomaly", hookRecord)
				args[3] = filepath.Join(out, "other")
				return args
			},
			exit: exitError, message: `--state .*state\.json: another watch holds its lock .*state\.json\.lock \(process [0-9]+\)`,
			maxTime: watchUntrustedBound, maxRSSMiB: watchUntrustedRSS,
			after: func(t *testing.T, out string) {
				if runs := hookRuns(t, out); len(runs) != 1 {
					t.Errorf("the hook ran %d times, want once", len(runs))
				}
				if _, err := os.Stat(filepath.Join(out, "other")); err == nil {
					t.Errorf("the refused watch left its output folder")
				}
			},
		},
	}
}

// firstWatch starts nanhunt with args in out and waits until it has run
// its hook; it is killed when the case ends.
func firstWatch(t *testing.T, out string, args []string) {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = out
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + out}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(out, "hook.log")); err == nil {
			return
		}
	}
	t.Fatal("the first watch did not raise the alarm")
}

// watchSignalCases: SIGTERM, SIGINT and SIGHUP stop a watch alike.
func watchSignalCases() []adversarialCase {
	clean := func(sig syscall.Signal, name string) adversarialCase {
		return adversarialCase{
			class: "untrusted input", name: "watch-" + strings.ToLower(name),
			input:  name + " to nanhunt watch --state once it has checked every step of a clean dump (steps 0-3) and waits for more",
			answer: "\"stopped: interrupted\", exit 0; the state is whole (next_step 4); no temporary or lock file, no empty output folder is left",
			setup: func(t *testing.T, in, out string) []string {
				fourCleanSteps(t, in)
				return endlessWatch(in, out)
			},
			signal: sig, signalWhen: func(out string) bool { return stateAt(out, 4) },
			exit: exitClean, message: `stopped: interrupted`, maxTime: watchUntrustedBound, maxRSSMiB: watchUntrustedRSS,
			after: func(t *testing.T, out string) {
				stateWhole(t, out, 4)
				noWatchLeftovers(t, out)
				noAlarmsFolder(t, out)
			},
		}
	}
	var suspectSeen time.Time // when the state showed step 0 checked
	return []adversarialCase{
		clean(syscall.SIGTERM, "SIGTERM"),
		clean(syscall.SIGINT, "SIGINT"),
		clean(syscall.SIGHUP, "SIGHUP"),
		{
			class: "untrusted input", name: "watch-sigint-behind",
			input:  "SIGINT to nanhunt watch --state once it has checked steps 0-3 of a clean dump, while step 4 is begun (its two rank folders hold no dump.json yet, --rank-timeout 1h)",
			answer: "\"stopped: interrupted\", then that the watch stopped before it checked step 4 (ranks 0,1): no clean bill, exit 3; the state is whole (next_step 4)",
			setup: func(t *testing.T, in, out string) []string {
				fourCleanSteps(t, in)
				for r := range 2 {
					if err := os.MkdirAll(filepath.Join(in, "step4", fmt.Sprintf("rank%d", r)), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				return endlessWatch(in, out, "--rank-timeout", "1h")
			},
			signal: syscall.SIGINT, signalWhen: func(out string) bool { return stateAt(out, 4) },
			exit: exitIncomplete, maxTime: watchUntrustedBound, maxRSSMiB: watchUntrustedRSS,
			message: `stopped: interrupted\nno NaN or Inf in what could be read, but the watch stopped before it checked step 4 \(ranks 0,1\): not a clean run \(exit status 3\)`,
			after: func(t *testing.T, out string) {
				stateWhole(t, out, 4)
				noWatchLeftovers(t, out)
				noAlarmsFolder(t, out)
			},
		},
		{
			class: "untrusted input", name: "watch-sigterm-suspect",
			input:  "SIGTERM to nanhunt watch --on-anomaly while step 1 shows a NaN and the watch waits for step 2 to tell whether it lasts",
			answer: "the anomaly is confirmed with what is there: the alarm, the hook once, the verdict whole, then \"stopped: interrupted\"; exit 1; no temporary or lock file",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{clean: true})
				writeDump(t, in, dumpSpec{steps: []string{"step1"}})
				suspectSeen = time.Time{}
				return endlessWatch(in, out, "--on-anomaly", hookRecord)
			},
			signal: syscall.SIGTERM,
			signalWhen: func(out string) bool {
				// step 1 is read in the poll that checks step 0: a second
				// after the state shows step 0, it waits for step 2
				if suspectSeen.IsZero() && stateAt(out, 1) {
					suspectSeen = time.Now()
				}
				return !suspectSeen.IsZero() && time.Since(suspectSeen) > time.Second
			},
			exit: exitAnomaly, message: `step 1: ANOMALY, first seen by the dump(.|\n)*stopped: interrupted`, maxTime: watchUntrustedBound, maxRSSMiB: watchUntrustedRSS,
			after: func(t *testing.T, out string) {
				verdictFile(t, filepath.Join(out, "alarms", "verdict-step1.json"))
				if runs := hookRuns(t, out); len(runs) != 1 {
					t.Errorf("the hook ran %d times, want once", len(runs))
				}
				noWatchLeftovers(t, out)
			},
		},
	}
}
