package robustness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/linktest"
)

// adversarialCase is one hostile input and what nanhunt must do with it.
type adversarialCase struct {
	class  string // the kind of defect the case closes
	name   string
	input  string // what the case makes, for people
	answer string // what nanhunt does, for people

	// setup makes the inputs under in and returns the arguments; the
	// child runs in out, the one folder it may write to.
	setup func(t *testing.T, in, out string) []string

	exit      int
	message   string // a regular expression some output must match
	maxTime   time.Duration
	maxRSSMiB int
	stdout    func(t *testing.T, stdout string) // more checks, when set
	asNobody  bool                              // run as uid 65534, so that permissions apply
	// during, when set, runs beside the child until it ends; a case
	// that changes its input on purpose sets mutates.
	during  func(in string, stop <-chan struct{})
	mutates bool
	// fileLimitKiB, when set, caps the size of every file the child
	// writes: a disk that fills up under it
	fileLimitKiB int
	// signal, when set, is sent to the child once signalWhen holds on the
	// folder it runs in
	signal     syscall.Signal
	signalWhen func(out string) bool
	// after, when set, checks what the child left in its folder
	after func(t *testing.T, out string)
	// env is more of the child's environment (a launcher's variables)
	env []string
}

const (
	exitClean      = 0
	exitAnomaly    = 1
	exitError      = 2
	exitIncomplete = 3
)

// Sizes of the big inputs; NANHUNT_ROBUSTNESS_FULL=1 takes the sizes a
// tester reported (5 million tensors, a 561 MB stack.json).
func size(normal, full int) int {
	if os.Getenv("NANHUNT_ROBUSTNESS_FULL") != "" {
		return full
	}
	return normal
}

func rank(in string, r int) string { return filepath.Join(in, "step0", "rank"+string(rune('0'+r))) }

func cases() []adversarialCase {
	return slices.Concat(falseCleanCases(), watchCleanCases(), baseCases(), nameCases(), watchUntrustedCases(), outputCases(), reproUntrustedCases(), summaryCleanCases(),
		summaryUntrustedCases())
}

func baseCases() []adversarialCase {
	return []adversarialCase{
		// Hangs and slow rejection
		{
			class: "hangs", name: "dump-fifo-rank",
			input:  "a rank's dump.json is a named pipe with no writer",
			answer: "the rank is unread and named; the other rank's answer stands",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				mkfifo(t, filepath.Join(rank(in, 1), "dump.json"))
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `named pipe`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "dump-fifo-file",
			input:  "the dump.json given is a named pipe",
			answer: "refused, saying what it is",
			setup: func(t *testing.T, in, out string) []string {
				p := filepath.Join(in, "dump.json")
				mkfifo(t, p)
				return []string{"trace", p}
			},
			exit: exitError, message: `named pipe`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "stack-fifo",
			input:  "stack.json of the origin rank is a named pipe",
			answer: "the verdict without the code line, and a warning",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				mkfifo(t, filepath.Join(rank(in, 0), "stack.json"))
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `stack.json: a named pipe`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "construct-fifo",
			input:  "construct.json of the origin rank is a named pipe",
			answer: "the verdict without the module chain, and a warning",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				mkfifo(t, filepath.Join(rank(in, 0), "construct.json"))
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `construct.json: a named pipe`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "dump-dev-zero",
			input:  "dump.json is a symbolic link to /dev/zero",
			answer: "refused: a character device",
			setup: func(t *testing.T, in, out string) []string {
				p := filepath.Join(in, "dump.json")
				symlink(t, "/dev/zero", p)
				return []string{"trace", p}
			},
			exit: exitError, message: `character device`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "dump-sparse-50g",
			input:  "a rank's dump.json is a 50 GB sparse file of zero bytes",
			answer: "refused at offset 0 without reading the rest",
			setup: func(t *testing.T, in, out string) []string {
				dir := filepath.Join(in, "step0", "rank0")
				os.MkdirAll(dir, 0o755)
				sparse(t, filepath.Join(dir, "dump.json"), 50<<30)
				return []string{"trace", dir}
			},
			exit: exitError, message: `offset 0`, maxTime: 3 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "log-dev-zero",
			input:  "--log /dev/zero",
			answer: "refused: a character device",
			setup: func(t *testing.T, in, out string) []string {
				return []string{"trace", "--log", "/dev/zero"}
			},
			exit: exitError, message: `/dev/zero: a character device`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "log-fifo",
			input:  "--log names a named pipe with no writer",
			answer: "refused: a named pipe",
			setup: func(t *testing.T, in, out string) []string {
				p := filepath.Join(in, "train.log")
				mkfifo(t, p)
				return []string{"trace", "--log", p}
			},
			exit: exitError, message: `named pipe`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "monitor-fifo",
			input:  "a monitor CSV is a named pipe with no writer",
			answer: "refused: a named pipe",
			setup: func(t *testing.T, in, out string) []string {
				dir := filepath.Join(in, "monitor", "Dec04_09-00-00-rank0-feedbeef")
				os.MkdirAll(dir, 0o755)
				mkfifo(t, filepath.Join(dir, "actv_0-1.csv"))
				return []string{"trace", "--monitor", filepath.Join(in, "monitor")}
			},
			exit: exitError, message: `named pipe`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "dump-zeros-after-header",
			input:  "a dump.json that starts well and goes on with 20 GB of zero bytes (sparse)",
			answer: "refused at the first zero byte without reading the rest",
			setup: func(t *testing.T, in, out string) []string {
				dir := filepath.Join(in, "step0", "rank0")
				writeFile(t, filepath.Join(dir, "dump.json"), `{"task": "statistics", "level": "L1", "data": {`)
				f, err := os.OpenFile(filepath.Join(dir, "dump.json"), os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := f.Truncate(20 << 30); err != nil {
					t.Fatal(err)
				}
				return []string{"trace", dir}
			},
			exit: exitError, message: `offset 4[0-9]`, maxTime: 3 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "dump-deep-nesting",
			input:  "an entry nested 1,000,000 lists deep",
			answer: "damage at the depth limit, with its offset; the other rank's answer stands",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{rawOrigin: `"input_args": ` + strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000)})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `nesting depth exceeds`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "dump-truncated",
			input:  "the origin rank's dump.json is cut inside the origin entry",
			answer: "the entries before the cut are analysed; the warning names the file and offset",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				p := filepath.Join(rank(in, 0), "dump.json")
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				cut := strings.Index(string(b), `"Torch.sqrt.0.forward"`) + 40
				writeFile(t, p, string(b[:cut]))
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `dump\.json: offset [0-9]+.*file ends early`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "hangs", name: "huge-number",
			input:  "the origin's output Max is written 1e999 (past float64)",
			answer: "read as +inf, as float64 holds it: the origin is an Inf",
			setup: func(t *testing.T, in, out string) []string {
				big := `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1e999, "Min": 0.5}`
				writeDump(t, in, dumpSpec{rawOrigin: `"input_args": [` + cleanTensor + `], "output": [` + big + `]`})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `kind +inf`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		// Memory that grows with the input
		{
			class: "memory", name: "rules-dev-zero",
			input:  "--rules /dev/zero",
			answer: "refused: a character device",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				return []string{"trace", in, "--rules", "/dev/zero"}
			},
			exit: exitError, message: `character device`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "memory", name: "rules-huge",
			input:  "--rules names a 4 GB file",
			answer: "refused by its size before it is read",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				p := filepath.Join(in, "rules.json")
				sparse(t, p, 4<<30)
				return []string{"trace", in, "--rules", p}
			},
			exit: exitError, message: `larger than`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "memory", name: "report-dev-zero",
			input:  "report /dev/zero",
			answer: "refused: a character device",
			setup: func(t *testing.T, in, out string) []string {
				return []string{"report", "/dev/zero"}
			},
			exit: exitError, message: `character device`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "memory", name: "report-huge",
			input:  "report reads a 1 GB saved verdict",
			answer: "refused by its size before it is read",
			setup: func(t *testing.T, in, out string) []string {
				p := filepath.Join(in, "verdict.json")
				sparse(t, p, 1<<30)
				return []string{"report", p}
			},
			exit: exitError, message: `larger than`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "memory", name: "report-big-verdict",
			input:  "report reads a 7 MB saved verdict (60,000 warnings; a run of 1,024 ranks writes about 1 MB)",
			answer: "the summary, in bounded memory (verdicts are capped at 8 MiB); exit 3, since the verdict does not say that everything was read",
			setup: func(t *testing.T, in, out string) []string {
				var b strings.Builder
				b.WriteString(`{"schema": "nanhunt/verdict/v1", "anomaly": false, "warnings": [`)
				for i := 0; i < 60_000; i++ {
					if i > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, `{"file": "/x/step0/rank%d/dump.json", "message": "damaged: offset 1234: file ends early; a crash during the write leaves this"}`, i)
				}
				b.WriteString("]}")
				p := filepath.Join(in, "verdict.json")
				writeFile(t, p, b.String())
				return []string{"report", p}
			},
			exit: exitIncomplete, message: `Warnings:\*\* 60000`, maxTime: 10 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "memory", name: "watch-many-steps",
			input:  "nanhunt watch over a finished run of 1,000 clean steps (10,000 in the full run)",
			answer: "every step checked once, in memory that does not follow the step count",
			setup: func(t *testing.T, in, out string) []string {
				steps := make([]string, size(1_000, 10_000))
				for i := range steps {
					steps[i] = fmt.Sprintf("step%d", i)
				}
				writeDump(t, in, dumpSpec{steps: steps, clean: true, dumpOnly: true})
				return []string{"watch", in, "--poll", "20ms", "--settle", "10ms", "--idle-exit", "1s", "-o", filepath.Join(out, "alarms"), "--nice", "0"}
			},
			exit: exitClean, message: `step [0-9]*999: clean(.|\n)*stopped: the folder stopped changing`, maxTime: 90 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "memory", name: "origin-many-tensors",
			input:  "the origin entry holds 500,000 tensors (5,000,000 in the full run)",
			answer: "the verdict, with memory that does not follow the tensor count",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{originInputs: size(500_000, 5_000_000)})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `Torch\.sqrt\.0\.forward`, maxTime: 20 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "memory", name: "origin-huge-string",
			input:  "a 300 MB string inside the origin entry",
			answer: "the string is cut at its limit; the verdict stands",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{originString: 300 << 20})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `Torch\.sqrt\.0\.forward`, maxTime: 20 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "memory", name: "stack-huge",
			input:  "stack.json of 270 MB (500 MB in the full run)",
			answer: "read streaming, keeping only the frames the verdict names",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{stackPad: size(1_500_000, 2_800_000)})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `train\.py:42`, maxTime: 30 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "memory", name: "stack-group-huge",
			input:  "stack.json v2 whose one stack is shared by 2,000,000 names, 48 MB (6,000,000, 150 MB in the full run)",
			answer: "read streaming: the names of a stack are kept only when asked for",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{stackGroup: size(2_000_000, 6_000_000)})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `train\.py:42`, maxTime: 30 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "memory", name: "construct-huge",
			input:  "construct.json of 215 MB (400 MB in the full run)",
			answer: "read streaming, keeping only the parents the verdict names",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{constructPad: size(3_500_000, 6_500_000)})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `Module\.layer\.Linear\.forward\.0`, maxTime: 30 * time.Second, maxRSSMiB: 64,
		},
		// Writes over an input
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
		// Symbolic links
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
			exit: exitClean, message: `step 3: clean(.|\n)*stopped: the folder stopped changing`, maxTime: 20 * time.Second, maxRSSMiB: 64,
		},
		// Command line
		{
			class: "command line", name: "no-arguments",
			input:  "nanhunt with no arguments",
			answer: "the usage on stderr, exit 2",
			setup:  func(t *testing.T, in, out string) []string { return []string{} },
			exit:   exitError, message: `Usage:`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "command line", name: "jobs-zero",
			input:  "--jobs 0 and --jobs -5",
			answer: "refused before anything is read",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				return []string{"trace", in, "--jobs", "-5"}
			},
			exit: exitError, message: `--jobs`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "command line", name: "steps-empty-item",
			input:  "--steps 1,,2",
			answer: "refused before anything is read",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				return []string{"trace", in, "--steps", "1,,2"}
			},
			exit: exitError, message: `--steps`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "command line", name: "flag-typo",
			input:  "--stpes 0",
			answer: "refused, with the flag it may be a typo of",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				return []string{"trace", in, "--stpes", "0"}
			},
			exit: exitError, message: `did you mean --steps`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "command line", name: "json-error-object",
			input:  "--format json on a dump whose only file is cut before its first entry",
			answer: "a JSON object with the error, its file and offset, on stdout; exit 2",
			setup: func(t *testing.T, in, out string) []string {
				dir := filepath.Join(in, "step0", "rank0")
				writeFile(t, filepath.Join(dir, "dump.json"), `{"task": "statistics", "data": {"Torch.sqrt.0.forward": {"input_args": [`)
				return []string{"trace", dir, "--format", "json"}
			},
			exit: exitError, message: `"error"`, maxTime: 5 * time.Second, maxRSSMiB: 64,
			stdout: func(t *testing.T, s string) {
				var got struct {
					Schema  string `json:"schema"`
					Anomaly *bool  `json:"anomaly"`
					Error   struct {
						Message string `json:"message"`
						File    string `json:"file"`
						Offset  *int64 `json:"offset"`
					} `json:"error"`
				}
				if err := json.Unmarshal([]byte(s), &got); err != nil {
					t.Fatalf("stdout is no JSON object: %v\n%s", err, s)
				}
				if got.Schema == "" || got.Anomaly != nil || got.Error.Message == "" || !strings.HasSuffix(got.Error.File, "dump.json") || got.Error.Offset == nil {
					t.Errorf("error object %+v", got)
				}
			},
		},
		// Saying what it cannot tell
		{
			class: "cannot tell", name: "odd-step-folders",
			input:  "step folders step05, step-1, stepabc, .step5 and step+4 beside step0",
			answer: "the verdict of step0, and a warning naming each folder not read",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{steps: []string{"step0", "step05", "step-1", "stepabc", ".step5", "step+4"}})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `step05.*step-1|step-1.*step05`, maxTime: 5 * time.Second, maxRSSMiB: 64,
			stdout: func(t *testing.T, s string) {
				for _, n := range []string{"step05", "step-1", "stepabc", ".step5", "step+4"} {
					if !strings.Contains(s, n) {
						t.Errorf("no warning names %s", n)
					}
				}
			},
		},
		{
			class: "cannot tell", name: "duplicate-key",
			input:  "the origin entry has two \"output\" keys",
			answer: "a warning naming the entry",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{rawOrigin: `"input_args": [` + cleanTensor + `], "output": [` + nanTensor + `], "output": [` + cleanTensor + `]`})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `duplicate.*"output"|"output".*twice`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "cannot tell", name: "odd-max",
			input:  "Max written as an object, a list, a word and a bool in float tensors",
			answer: "a warning that the statistics are unreadable",
			setup: func(t *testing.T, in, out string) []string {
				odd := func(max string) string {
					return `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": ` + max + `, "Min": 0.0}`
				}
				writeDump(t, in, dumpSpec{rawOrigin: `"input_args": [` + odd(`{"v": 1}`) + `, ` + odd(`[1]`) + `, ` + odd(`"big"`) + `, ` + odd(`true`) + `], "output": [` + nanTensor + `]`})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `Max.*(object|list|string|bool)`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "cannot tell", name: "dump-is-directory",
			input:  "a rank's dump.json is a directory",
			answer: "the rank is named unread: its dump.json is a directory",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				p := filepath.Join(rank(in, 1), "dump.json")
				os.Remove(p)
				os.Mkdir(p, 0o755)
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `dump\.json: a directory`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "cannot tell", name: "rank-permission-denied",
			input:  "a rank folder the user may not read",
			answer: "the rank is named unread: permission denied",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				os.Chmod(rank(in, 1), 0o000)
				t.Cleanup(func() { os.Chmod(rank(in, 1), 0o755) })
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `rank1.*permission denied`, maxTime: 5 * time.Second, maxRSSMiB: 64,
			asNobody: true,
		},
		{
			class: "cannot tell", name: "rewritten-while-read",
			input:  "the origin rank's 200 MB dump.json is written to every few milliseconds while nanhunt reads it",
			answer: "read again; still changing, the verdict warns and its confidence drops",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{padEntries: 600_000})
				return []string{"trace", in}
			},
			during: func(in string, stop <-chan struct{}) {
				p := filepath.Join(rank(in, 0), "dump.json")
				for i := 1; ; i++ {
					select {
					case <-stop:
						return
					case <-time.After(3 * time.Millisecond):
					}
					stamp := time.Unix(1_000_000_000+int64(i), 0)
					os.Chtimes(p, stamp, stamp)
				}
			},
			mutates: true,
			exit:    exitAnomaly, message: `changed while it was read`, maxTime: 20 * time.Second, maxRSSMiB: 64,
			stdout: func(t *testing.T, s string) {
				if strings.Contains(s, "Confidence: high") {
					t.Errorf("confidence high for a file that changed while it was read")
				}
			},
		},
		{
			class: "cannot tell", name: "plan-verdict-no-ranks",
			input:  "plan --verdict with a saved verdict whose origin.ranks is empty",
			answer: "refused: the verdict names no origin rank",
			setup: func(t *testing.T, in, out string) []string {
				p := filepath.Join(in, "verdict.json")
				writeFile(t, p, holeyVerdict(t))
				return []string{"plan", "--verdict", p}
			},
			exit: exitError, message: `origin`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		},
	}
}

// firstLine checks the first line of the report.
func firstLine(want string) func(t *testing.T, stdout string) {
	return func(t *testing.T, stdout string) {
		t.Helper()
		if got, _, _ := strings.Cut(stdout, "\n"); got != want {
			t.Errorf("first line %q, want %q", got, want)
		}
	}
}

// holeyVerdict is a saved verdict with an anomaly whose origin names no rank.
func holeyVerdict(t *testing.T) string {
	v := map[string]any{
		"schema": "nanhunt/verdict/v1", "anomaly": true,
		"origin": map[string]any{"step": 0, "ranks": []int{}, "op": "Torch.sqrt.0.forward", "stage": "forward", "kind": "nan"},
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
