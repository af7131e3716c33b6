package robustness

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// eightCleanSteps writes a clean two-rank dump of steps 0-7.
func eightCleanSteps(t *testing.T, in string) {
	t.Helper()
	var steps []string
	for s := range 8 {
		steps = append(steps, "step"+string(rune('0'+s)))
	}
	writeDump(t, in, dumpSpec{steps: steps, clean: true})
}

// indentDump lays a clean dump.json out the way msprobe writes it
// (json.dump with indent=1), with tail written after its last member.
func indentDump(t *testing.T, p, tail string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", " "); err != nil {
		t.Fatal(err)
	}
	doc := strings.TrimSuffix(strings.TrimRight(out.String(), "\n"), "\n}")
	writeFile(t, p, doc+tail+"\n}\n")
}

// garble replaces the dump.json of every rank of the steps with bytes that
// are no JSON.
func garble(t *testing.T, in string, steps ...string) {
	t.Helper()
	for _, s := range steps {
		for _, r := range []string{"rank0", "rank1"} {
			writeFile(t, filepath.Join(in, s, r, "dump.json"), "\x00garbage, not a dump\n")
		}
	}
}

// incompleteJSON checks a JSON verdict (or skill output) that found no
// anomaly and lists the unread rank-steps of the steps given.
func incompleteJSON(steps ...int) func(t *testing.T, stdout string) {
	return func(t *testing.T, stdout string) {
		t.Helper()
		var v struct {
			Anomaly  bool `json:"anomaly"`
			Complete *bool
			Unread   []struct {
				Step  int   `json:"step"`
				Ranks []int `json:"ranks"`
			} `json:"unread"`
			Steps []struct {
				Step   int    `json:"step"`
				Status string `json:"status"`
			} `json:"steps"`
		}
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatalf("stdout is no JSON object: %v", err)
		}
		if v.Anomaly || v.Complete == nil || *v.Complete {
			t.Errorf("anomaly %v, complete %v: want false, false", v.Anomaly, v.Complete)
		}
		var got []int
		for _, u := range v.Unread {
			if !slices.Equal(u.Ranks, []int{0, 1}) {
				t.Errorf("unread step %d ranks %v, want 0,1", u.Step, u.Ranks)
			}
			got = append(got, u.Step)
		}
		if !slices.Equal(got, steps) {
			t.Errorf("unread steps %v, want %v", got, steps)
		}
		for _, s := range v.Steps {
			if slices.Contains(steps, s.Step) && s.Status == "clean" {
				t.Errorf("step %d could not be read and is called clean", s.Step)
			}
		}
	}
}

// falseCleanCases are inputs on which "no NaN or Inf" would be a claim
// about something that was not read.
func falseCleanCases() []adversarialCase {
	return slices.Concat(unreadStepCases(), notReadCases(), fastPathLimitCases())
}

// unreadStepCases are steps that could not be read, said as such in the
// report, the JSON, the skill output and the plan.
func unreadStepCases() []adversarialCase {
	const bound, rss = 10 * time.Second, 64
	unread := "nanhunt: no NaN or Inf in what could be read; steps 5-7 (ranks 0,1) could not be read."
	return []adversarialCase{
		{
			class: "false clean", name: "unread-steps",
			input:  "a clean dump of steps 0-7 whose dump.json files of steps 5-7 are garbage",
			answer: "exit 3: no NaN or Inf in what could be read, steps 5-7 named unread",
			setup: func(t *testing.T, in, out string) []string {
				eightCleanSteps(t, in)
				garble(t, in, "step5", "step6", "step7")
				return []string{"trace", in}
			},
			exit: exitIncomplete, message: regexp.QuoteMeta(unread), maxTime: bound, maxRSSMiB: rss,
			stdout: firstLine(unread),
		},
		{
			class: "false clean", name: "unread-steps-json",
			input:  "the same, --format json",
			answer: `"complete": false, the unread rank-steps, no step of them "clean"`,
			setup: func(t *testing.T, in, out string) []string {
				eightCleanSteps(t, in)
				garble(t, in, "step5", "step6", "step7")
				return []string{"trace", in, "--format", "json"}
			},
			exit: exitIncomplete, message: `"complete": false`, maxTime: bound, maxRSSMiB: rss,
			stdout: incompleteJSON(5, 6, 7),
		},
		{
			class: "false clean", name: "unread-steps-skill",
			input:  "the same, --format skill",
			answer: `"complete": false, the unread rank-steps, a note naming them`,
			setup: func(t *testing.T, in, out string) []string {
				eightCleanSteps(t, in)
				garble(t, in, "step5", "step6", "step7")
				return []string{"trace", in, "--format", "skill"}
			},
			exit: exitIncomplete, message: `steps 5-7 \(ranks 0,1\) could not be read whole`, maxTime: bound, maxRSSMiB: rss,
			stdout: incompleteJSON(5, 6, 7),
		},
		{
			class: "false clean", name: "unread-steps-plan",
			input:  "the same, nanhunt plan",
			answer: "exit 3: nothing to chase in what could be read, and the unread steps to copy or dump again",
			setup: func(t *testing.T, in, out string) []string {
				eightCleanSteps(t, in)
				garble(t, in, "step5", "step6", "step7")
				return []string{"plan", in}
			},
			exit: exitIncomplete, message: `steps 5-7 \(ranks 0,1\) could not be read whole`, maxTime: bound, maxRSSMiB: rss,
		},
	}
}

// notReadCases are ranks, steps, files and logs that were not read whole:
// found before the answer is clean.
func notReadCases() []adversarialCase {
	const bound, rss = 10 * time.Second, 64
	return []adversarialCase{
		{
			class: "false clean", name: "rank-folder-missing-one-step",
			input:  "a clean two-rank dump of steps 0-7 without rank 1's folder at step 3",
			answer: "exit 3: step 3 (rank 1) could not be read",
			setup: func(t *testing.T, in, out string) []string {
				eightCleanSteps(t, in)
				if err := os.RemoveAll(filepath.Join(in, "step3", "rank1")); err != nil {
					t.Fatal(err)
				}
				return []string{"trace", in}
			},
			exit: exitIncomplete, message: `^nanhunt: no NaN or Inf in what could be read; step 3 \(rank 1\) could not be read\.`, maxTime: bound, maxRSSMiB: rss,
		},
		{
			class: "false clean", name: "last-step-link-nowhere",
			input:  "a clean dump of steps 0-7 whose step7 folder is a link to a disk that is not mounted",
			answer: "exit 3: step 7 (ranks 0,1) could not be read",
			setup: func(t *testing.T, in, out string) []string {
				eightCleanSteps(t, in)
				if err := os.RemoveAll(filepath.Join(in, "step7")); err != nil {
					t.Fatal(err)
				}
				symlink(t, "/nonexistent-disk/step7", filepath.Join(in, "step7"))
				return []string{"trace", in}
			},
			exit: exitIncomplete, message: `^nanhunt: no NaN or Inf in what could be read; step 7 \(ranks 0,1\) could not be read\.`, maxTime: bound, maxRSSMiB: rss,
		},
		{
			class: "false clean", name: "clean-file-cut",
			input:  "a clean dump whose rank 1 file is cut after its first entry",
			answer: "exit 3: the entries before the cut are clean, the rest is unknown",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{clean: true, padEntries: 20})
				p := filepath.Join(rank(in, 1), "dump.json")
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, p, string(b[:len(b)/2]))
				return []string{"trace", in}
			},
			exit: exitIncomplete, message: `step 0 +rank 1 +damaged`, maxTime: bound, maxRSSMiB: rss,
		},
		{
			class: "false clean", name: "clean-file-second-data",
			input: "a clean dump laid out as msprobe writes it (indent 1) whose rank 1 file has a second, empty " +
				"\"data\" member after its entries (msprobe writes one)",
			answer: "exit 3: damage at the second \"data\", named with its offset; the entries of the first are clean",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{clean: true, padEntries: 20})
				for r := range 2 {
					indentDump(t, filepath.Join(rank(in, r), "dump.json"), "")
				}
				indentDump(t, filepath.Join(rank(in, 1), "dump.json"), ",\n \"data\": {}")
				return []string{"trace", in}
			},
			exit: exitIncomplete, message: `rank1/dump\.json: offset \d+: a second "data" member`, maxTime: bound, maxRSSMiB: rss,
		},
		{
			class: "false clean", name: "rank-gap-clean",
			input:  "a clean dump with folders for ranks 0 and 2 only (a rank-subset dump)",
			answer: "exit 0, and rank 1 is named as not dumped",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{clean: true})
				if err := os.Rename(rank(in, 1), rank(in, 2)); err != nil {
					t.Fatal(err)
				}
				return []string{"trace", in}
			},
			exit: exitClean, message: `Rank 1 of the job has no folder at any step read`, maxTime: bound, maxRSSMiB: rss,
		},
		{
			class: "false clean", name: "rank-gap-anomaly",
			input:  "a NaN born on rank 1 at step 2 (4 ranks, steps 0-3, nanhunt synth log-negative) without rank 2's folder at any step",
			answer: "exit 1: the origin on rank 1, confidence medium (not high), a reason naming rank 2, which may have made it first",
			setup: func(t *testing.T, in, out string) []string {
				dump := filepath.Join(in, "dump")
				synthRun(t, dump, "0-3", "log-negative", 2, 1)
				gone, _ := filepath.Glob(filepath.Join(dump, "step*", "rank2"))
				if len(gone) != 4 {
					t.Fatalf("setup: rank 2 folders %v, want one a step", gone)
				}
				for _, d := range gone {
					if err := os.RemoveAll(d); err != nil {
						t.Fatal(err)
					}
				}
				return []string{"trace", dump}
			},
			exit: exitAnomaly, message: `rank 2 of step 2 was not dumped: it may have made it first`, maxTime: bound, maxRSSMiB: rss,
			stdout: firstLine("nanhunt: the first NaN was born at step 2 on rank 1, in Torch.log.0.forward (forward), confidence medium."),
		},
		{
			class: "false clean", name: "next-step-unread",
			input:  "a NaN at step 0 and garbage in every file of step 1, the step that tells whether it lasted",
			answer: "exit 1: the anomaly is not called one that did not last; confidence medium, naming step 1",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{steps: []string{"step0", "step1"}})
				garble(t, in, "step1")
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `whether the anomaly lasted cannot be told`, maxTime: bound, maxRSSMiB: rss,
			stdout: func(t *testing.T, s string) {
				if strings.Contains(s, "did not last") || !strings.Contains(s, "Confidence: medium") {
					t.Errorf("want a lasting anomaly of confidence medium:\n%s", clip(s))
				}
			},
		},
		{
			class: "false clean", name: "log-after-the-dump",
			input:  "the dump stops at step 1, clean; the training log prints a NaN loss at step 2 (nanhunt synth log-negative)",
			answer: "exit 1: the log shows the NaN, the dump does not cover it, and the plan dumps it",
			setup: func(t *testing.T, in, out string) []string {
				synthWith(t, "log-negative", filepath.Join(in, "dump"), "--log-dir", filepath.Join(in, "logs"))
				for _, s := range []string{"step2", "step3"} {
					if err := os.RemoveAll(filepath.Join(in, "dump", s)); err != nil {
						t.Fatal(err)
					}
				}
				return []string{"trace", filepath.Join(in, "dump"), "--log", filepath.Join(in, "logs", "train.log")}
			},
			exit: exitAnomaly, message: `^nanhunt: the training log shows a NaN loss first at iteration 3 \(dump step 2\); the dump \(step 1\) holds no NaN or Inf`, maxTime: bound, maxRSSMiB: rss,
		},
		{
			class: "false clean", name: "advice-from-unread-step",
			input:  "a fused optimizer writes NaN weights at step 2 (nanhunt synth optimizer-nan-fused) and step 2's files are garbage",
			answer: "the advice does not call step 2 dumped and clean",
			setup: func(t *testing.T, in, out string) []string {
				synth(t, "optimizer-nan-fused", in)
				for _, r := range []string{"rank0", "rank1", "rank2", "rank3"} {
					writeFile(t, filepath.Join(in, "step2", r, "dump.json"), "garbage\n")
				}
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `Step 2 was dumped but step 2 \(ranks 0-3\) could not be read whole`, maxTime: bound, maxRSSMiB: rss,
			stdout: func(t *testing.T, s string) {
				if strings.Contains(s, "Step 2 was dumped and is clean") {
					t.Errorf("the advice reasons from step 2, which could not be read:\n%s", clip(s))
				}
			},
		},
	}
}

// synth writes a generated scenario under dir with the nanhunt binary.
func synth(t *testing.T, scenario, dir string) { synthWith(t, scenario, dir) }

// synthWith is synth with more flags (--log-dir, --monitor-dir).
func synthWith(t *testing.T, scenario, dir string, flags ...string) {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"synth", "--scenario", scenario, "-o", dir}, flags...)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("nanhunt synth %s: %v\n%s", scenario, err, out)
	}
}
