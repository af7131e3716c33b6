package robustness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/linktest"
)

// writeCases are ways a command could write over an input.
func writeCases() []adversarialCase {
	return []adversarialCase{
		{
			class: "writes", name: "out-hard-link-to-dump",
			input:  "-o names a hard link to a rank's dump.json",
			answer: "refused: the output is an input",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				link := filepath.Join(out, "verdict.json")
				if err := os.Link(filepath.Join(rank(in, 0), "dump.json"), link); err != nil {
					t.Fatal(err)
				}
				return []string{"trace", in, "-o", link}
			},
			exit: exitError, message: `same file as`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "writes", name: "out-is-log",
			input:  "-o names the --log file",
			answer: "refused: the output is an input",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				log := filepath.Join(in, "train.log")
				writeFile(t, log, "iteration 1 | lm loss: 2.5 | grad norm: 1.0\n")
				return []string{"trace", in, "--log", log, "-o", log}
			},
			exit: exitError, message: `train\.log`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "writes", name: "out-is-rules",
			input:  "--html names the --rules file",
			answer: "refused: the output is an input",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				rules := filepath.Join(in, "rules.json")
				writeFile(t, rules, `[{"op": "Torch.sqrt", "side": "output", "values": "nan", "reason": "test"}]`)
				return []string{"trace", in, "--rules", rules, "--html", rules}
			},
			exit: exitError, message: `rules\.json`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "writes", name: "out-is-verdict",
			input:  "plan --verdict V -o V",
			answer: "refused: the output is an input",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				v := filepath.Join(in, "verdict.json")
				writeFile(t, v, `{"schema": "nanhunt/verdict/v1", "anomaly": false}`)
				return []string{"plan", "--verdict", v, "-o", v}
			},
			exit: exitError, message: `verdict\.json`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "writes", name: "two-outputs-one-file",
			input:  "-o F --html F",
			answer: "refused: one output would clobber the other",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				f := filepath.Join(out, "report")
				return []string{"trace", in, "-o", f, "--html", f}
			},
			exit: exitError, message: `report`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "writes", name: "out-inside-dump-root",
			input:  "a rank folder is given and -o points into the step folder above it",
			answer: "refused: the dump root is found upward",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				return []string{"trace", rank(in, 0), "-o", filepath.Join(in, "step0", "verdict.json")}
			},
			exit: exitError, message: `inside`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "writes", name: "html-through-linked-step",
			input:  "--html names dump/step0/rank1/dump.json, where step0 is a link to another disk",
			answer: "refused: inside the dump, naming the link",
			setup: func(t *testing.T, in, out string) []string {
				dump := spreadDump(t, in, dumpSpec{})
				return []string{"trace", dump, "--html", filepath.Join(dump, "step0", "rank1", "dump.json")}
			},
			exit: exitError, message: `inside the dump .*step0 is a link to`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "writes", name: "out-in-linked-rank",
			input:  "-o names a new file in a rank folder that is a link",
			answer: "refused: inside the dump, naming the link",
			setup: func(t *testing.T, in, out string) []string {
				dump := spreadDump(t, in, dumpSpec{})
				return []string{"trace", dump, "-o", filepath.Join(dump, "step0", "rank0", "verdict.json")}
			},
			exit: exitError, message: `inside the dump .*rank0 is a link to`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "writes", name: "out-parent-links-into-dump",
			input:  "-o names a file in a folder that is a link to the folder a step link leads to",
			answer: "refused: inside the dump",
			setup: func(t *testing.T, in, out string) []string {
				dump := spreadDump(t, in, dumpSpec{})
				symlink(t, filepath.Join(in, "disk2", "step0"), filepath.Join(out, "reports"))
				return []string{"trace", dump, "-o", filepath.Join(out, "reports", "verdict.json")}
			},
			exit: exitError, message: `inside the dump`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "writes", name: "out-is-linked-stack-target",
			input:  "-o names the file a rank's stack.json is a symbolic link to, outside the dump",
			answer: "refused: the output is an input",
			setup: func(t *testing.T, in, out string) []string {
				dump := filepath.Join(in, "dump")
				writeDump(t, dump, dumpSpec{})
				stack := filepath.Join(in, "shared", "stack.json")
				linktest.Move(t, filepath.Join(rank(dump, 0), "stack.json"), stack, stack)
				return []string{"trace", dump, "-o", stack}
			},
			exit: exitError, message: `same file as the input .*stack\.json`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
	}
}

// linkCases are symbolic links in and around a dump.
func linkCases() []adversarialCase {
	return []adversarialCase{
		{
			class: "links", name: "linked-step-and-rank",
			input:  "the step folder is a link to another disk, and in it the origin rank's folder a relative link to a third",
			answer: "the verdict of the real folders (its first line the same), the two links named",
			setup: func(t *testing.T, in, out string) []string {
				return []string{"trace", spreadDump(t, in, dumpSpec{})}
			},
			exit: exitAnomaly, message: `Folders that are links: .*step0 -> .*rank0 -> `, maxTime: 5 * time.Second, maxRSSMiB: 64,
			stdout: firstLine(`nanhunt: the first NaN was born at step 0 on rank 0, in Torch.sqrt.0.forward (forward), confidence medium.`),
		},
		{
			class: "links", name: "dangling-origin-rank",
			input:  "the origin rank's folder is a link to a disk that is not mounted",
			answer: "the rank is named unread and a possible source; never a confident origin elsewhere",
			setup: func(t *testing.T, in, out string) []string {
				dump := filepath.Join(in, "dump")
				writeDump(t, dump, dumpSpec{})
				os.RemoveAll(rank(dump, 0))
				symlink(t, filepath.Join(in, "unmounted", "rank0"), rank(dump, 0))
				return []string{"trace", dump}
			},
			exit: exitAnomaly, message: `rank0: a symbolic link that cannot be followed`, maxTime: 5 * time.Second, maxRSSMiB: 64,
			stdout: func(t *testing.T, s string) {
				if strings.Contains(s, "confidence high") || strings.Contains(s, "Confidence: high") {
					t.Errorf("a confident origin with the origin rank unread:\n%s", clip(s))
				}
			},
		},
		{
			class: "links", name: "link-loop-step",
			input:  "beside step0, step1 is a link to itself",
			answer: "a warning naming step1; the verdict of step0",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				symlink(t, "step1", filepath.Join(in, "step1"))
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `step1: a symbolic link that cannot be followed`, maxTime: 5 * time.Second, maxRSSMiB: 64,
			stdout: firstLine(`nanhunt: the first NaN was born at step 0 on rank 0, in Torch.sqrt.0.forward (forward), confidence medium.`),
		},
		{
			class: "links", name: "prune-through-links",
			input:  "watch --prune-clean-tensors 1 over clean steps whose step folder, rank folders or tensor folders are links",
			answer: "every step checked; no tensor reached through a link is deleted",
			setup: func(t *testing.T, in, out string) []string {
				dump := filepath.Join(in, "dump")
				writeDump(t, dump, dumpSpec{steps: []string{"step0", "step1", "step2", "step3"}, clean: true, dumpOnly: true})
				tensors(t, dump)
				linktest.Move(t, filepath.Join(dump, "step0"), filepath.Join(in, "disk2", "step0"), filepath.Join(in, "disk2", "step0"))
				for _, r := range []string{"rank0", "rank1"} {
					to := filepath.Join(in, "nvme1", "step1-"+r)
					linktest.Move(t, filepath.Join(dump, "step1", r), to, to)
					to = filepath.Join(in, "nvme1", "step2-"+r+"-tensors")
					linktest.Move(t, filepath.Join(dump, "step2", r, "dump_tensor_data"), to, to)
				}
				return []string{"watch", dump, "--prune-clean-tensors", "1", "--poll", "20ms", "--settle", "10ms", "--idle-exit", "1s", "-o", filepath.Join(out, "alarms"), "--nice", "0"}
			},
			exit: exitClean, message: `step 3: clean(.|\n)*stopped: the folder stopped changing`, maxTime: bound(20 * time.Second), maxRSSMiB: 64,
		},
	}
}
