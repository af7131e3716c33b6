package robustness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fastWatch are the timings of a watch over a finished run: short settle,
// rank timeout and idle exit, so that each case takes a second or two.
var fastWatch = []string{"--settle", "50ms", "--poll", "20ms", "--rank-timeout", "300ms", "--idle-exit", "1s", "--nice", "0"}

// watchArgs are the arguments of a watch of in, writing to out.
func watchArgs(in, out string, more ...string) []string {
	return append(append([]string{"watch", in, "-o", filepath.Join(out, "alarms")}, fastWatch...), more...)
}

// fourCleanSteps writes a clean two-rank dump of steps 0-3.
func fourCleanSteps(t *testing.T, in string) {
	t.Helper()
	writeDump(t, in, dumpSpec{steps: []string{"step0", "step1", "step2", "step3"}, clean: true})
}

// removeAll deletes paths under in (a rank that crashed).
func removeAll(t *testing.T, in string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.RemoveAll(filepath.Join(in, p)); err != nil {
			t.Fatal(err)
		}
	}
}

// hasLine checks that stdout has a line, whole.
func hasLine(want string) func(t *testing.T, stdout string) {
	return func(t *testing.T, stdout string) {
		t.Helper()
		for _, l := range strings.Split(stdout, "\n") {
			if l == want {
				return
			}
		}
		t.Errorf("no line %q in\n%s", want, clip(stdout))
	}
}

// watchCleanCases are followed runs on which a watch would end "clean",
// or wait forever, about something it never read: a rank that crashed, a
// step of garbage, a NaN that only the log shows, tensors of a rank whose
// dump.json could not be read.
func watchCleanCases() []adversarialCase {
	const maxTime, rss = 10 * time.Second, 64
	var tensors, state string // the dump of the pruning case and the state file of the state case, for their checks
	return []adversarialCase{
		{
			class: "false clean", name: "watch-rank-never-finishes",
			input:  "nanhunt watch --idle-exit over a clean two-rank dump of steps 0-3 whose rank 1 crashed before writing step 3",
			answer: "exit 3: `step 3 incomplete: rank 1 never wrote it` after --rank-timeout, never clean",
			setup: func(t *testing.T, in, out string) []string {
				fourCleanSteps(t, in)
				removeAll(t, in, "step3/rank1")
				return watchArgs(in, out)
			},
			exit: exitIncomplete, message: `not a clean run \(exit status 3\)`, maxTime: maxTime, maxRSSMiB: rss,
			stdout: hasLine("step 3 incomplete: rank 1 never wrote it (rank 0 clean)"),
		},
		{
			class: "false clean", name: "watch-rank-never-finishes-jsonl",
			input:  "the same, --format jsonl",
			answer: `the step event and the stopped event say "complete": false and name step 3, rank 1, "never finished"`,
			setup: func(t *testing.T, in, out string) []string {
				fourCleanSteps(t, in)
				removeAll(t, in, "step3/rank1")
				return watchArgs(in, out, "--format", "jsonl")
			},
			exit: exitIncomplete, message: `"event":"step","time":"[^"]*","step":3,"status":"incomplete","ranks":"0","complete":false,"unread":\[\{"step":3,"ranks":\[1\],"reason":"never finished"\}\]`,
			maxTime: maxTime, maxRSSMiB: rss,
			stdout: func(t *testing.T, stdout string) {
				if !regexp.MustCompile(`"event":"stopped".*"complete":false,"unread":\[\{"step":3`).MatchString(stdout) {
					t.Errorf("the stopped event does not say the watch is incomplete:\n%s", clip(stdout))
				}
			},
		},
		{
			class: "false clean", name: "watch-crash-at-the-nan",
			input:  "nanhunt watch --idle-exit over log-negative (NaN born at step 2 on rank 2) whose rank 3 crashed during step 2: no step2/rank3, no step 3",
			answer: "exit 1: the origin trace gives, rank 3 named as never finished, confidence medium",
			setup: func(t *testing.T, in, out string) []string {
				synth(t, "log-negative", in)
				removeAll(t, in, "step3", "step2/rank3")
				return watchArgs(in, out)
			},
			exit: exitAnomaly, message: `rank 3 never finished writing step 2`, maxTime: maxTime, maxRSSMiB: rss,
			stdout: firstLineOf("step 2: ANOMALY, first seen by the dump", "nanhunt: the first NaN was born at step 2 on rank 2, in Torch.log.0.forward (forward), confidence medium."),
		},
		{
			class: "false clean", name: "watch-unreadable-step",
			input:  "nanhunt watch over a clean dump of steps 0-3 whose dump.json files of step 2 are garbage",
			answer: "exit 3: `step 2: could not be read (ranks 0,1: unreadable)`",
			setup: func(t *testing.T, in, out string) []string {
				fourCleanSteps(t, in)
				garble(t, in, "step2")
				return watchArgs(in, out)
			},
			exit: exitIncomplete, message: `not a clean run`, maxTime: maxTime, maxRSSMiB: rss,
			stdout: hasLine("step 2: could not be read (ranks 0,1: unreadable)"),
		},
		{
			class: "false clean", name: "watch-log-only-nan",
			input:  "nanhunt watch --log: the log shows NaN at step 2, the dump (log-negative) stops at step 1",
			answer: "exit 1: the alarm from the log, saying where the dump stops",
			setup: func(t *testing.T, in, out string) []string {
				synth(t, "log-negative", in)
				removeAll(t, in, "step2", "step3")
				log := filepath.Join(in, "train.jsonl")
				writeFile(t, log, "{\"step\": 1, \"loss\": 2.4}\n{\"step\": 2, \"loss\": NaN}\n")
				return watchArgs(in, out, "--log", log)
			},
			exit: exitAnomaly, message: `verdict: .*verdict-step2\.json`, maxTime: maxTime, maxRSSMiB: rss,
			stdout: hasLine("step 2: ANOMALY, first seen by the log: the log shows NaN at step 2; the dump stops at step 1: dump step 2"),
		},
		{
			class: "false clean", name: "watch-prune-unread-rank",
			input:  "nanhunt watch --prune-clean-tensors 1 over a tensor dump of steps 0-3 whose rank 1 dump.json of step 1 is garbage",
			answer: "exit 3; every tensor of step 1 is kept (the clean steps 0 and 2 are pruned)",
			setup: func(t *testing.T, in, out string) []string {
				fourCleanSteps(t, in)
				for _, step := range []string{"step0", "step1", "step2", "step3"} {
					for _, r := range []string{"rank0", "rank1"} {
						writeFile(t, filepath.Join(in, step, r, "dump_tensor_data", "Torch.sqrt.0.forward.output.0.pt"), "tensor")
					}
				}
				writeFile(t, filepath.Join(in, "step1", "rank1", "dump.json"), "\x00garbage, not a dump\n")
				tensors = in
				return watchArgs(in, out, "--prune-clean-tensors", "1")
			},
			exit: exitIncomplete, message: `step 1 incomplete: rank 1 could not be read`, maxTime: maxTime, maxRSSMiB: rss, mutates: true,
			stdout: func(t *testing.T, stdout string) {
				for step, want := range map[string]int{"step0": 0, "step1": 2, "step2": 0, "step3": 2} {
					left, _ := filepath.Glob(filepath.Join(tensors, step, "rank*", "dump_tensor_data", "*.pt"))
					if len(left) != want {
						t.Errorf("%s: %d tensor files left, want %d", step, len(left), want)
					}
				}
			},
		},
		{
			class: "false clean", name: "watch-state-incomplete",
			input:  "nanhunt watch --state over a clean dump of steps 0-3 whose rank 1 dump.json of step 1 is missing",
			answer: "exit 3; the state resumes at step 1, not after it",
			setup: func(t *testing.T, in, out string) []string {
				fourCleanSteps(t, in)
				removeAll(t, in, "step1/rank1/dump.json")
				state = filepath.Join(out, "state.json")
				return watchArgs(in, out, "--state", state)
			},
			exit: exitIncomplete, message: `step 1 incomplete: rank 1 could not be read`, maxTime: maxTime, maxRSSMiB: rss,
			stdout: func(t *testing.T, stdout string) {
				if next := stateNext(t, state); next != 1 {
					t.Errorf("the state resumes at step %d, want 1", next)
				}
			},
		},
	}
}

// firstLineOf checks two lines of the text output, in order, the second
// right after a blank line following the first.
func firstLineOf(head, verdict string) func(t *testing.T, stdout string) {
	return func(t *testing.T, stdout string) {
		t.Helper()
		if !strings.Contains(stdout, head+"\n\n"+verdict+"\n") {
			t.Errorf("no %q then %q in\n%s", head, verdict, clip(stdout))
		}
	}
}

// stateNext reads next_step from a watch state file.
func stateNext(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Next int `json:"next_step"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st.Next
}
