package robustness

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// memoryCases are inputs on which memory could grow with the input.
func memoryCases() []adversarialCase {
	return []adversarialCase{
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
			exit: exitClean, message: `step [0-9]*999: clean(.|\n)*stopped: the folder stopped changing`, maxTime: bound(90 * time.Second), maxRSSMiB: 64,
		},
		{
			class: "memory", name: "origin-many-tensors",
			input:  "the origin entry holds 500,000 tensors (5,000,000 in the full run)",
			answer: "the verdict, with memory that does not follow the tensor count",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{originInputs: size(500_000, 5_000_000)})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `Torch\.sqrt\.0\.forward`, maxTime: bound(20 * time.Second), maxRSSMiB: 64,
		},
		{
			class: "memory", name: "origin-huge-string",
			input:  "a 300 MB string inside the origin entry",
			answer: "the string is cut at its limit; the verdict stands",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{originString: 300 << 20})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `Torch\.sqrt\.0\.forward`, maxTime: bound(20 * time.Second), maxRSSMiB: 64,
		},
		{
			class: "memory", name: "stack-huge",
			input:  "stack.json of 270 MB (500 MB in the full run)",
			answer: "read streaming, keeping only the frames the verdict names",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{stackPad: size(1_500_000, 2_800_000)})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `train\.py:42`, maxTime: bound(30 * time.Second), maxRSSMiB: 64,
		},
		{
			class: "memory", name: "stack-group-huge",
			input:  "stack.json v2 whose one stack is shared by 2,000,000 names, 48 MB (6,000,000, 150 MB in the full run)",
			answer: "read streaming: the names of a stack are kept only when asked for",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{stackGroup: size(2_000_000, 6_000_000)})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `train\.py:42`, maxTime: 10 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "memory", name: "construct-huge",
			input:  "construct.json of 215 MB (400 MB in the full run)",
			answer: "read streaming, keeping only the parents the verdict names",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{constructPad: size(3_500_000, 6_500_000)})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `Module\.layer\.Linear\.forward\.0`, maxTime: bound(30 * time.Second), maxRSSMiB: 64,
		},
	}
}
