package robustness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// commandLineCases are command lines that must be refused or read as meant.
func commandLineCases() []adversarialCase {
	return []adversarialCase{
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
	}
}

// cannotTellCases are inputs where nanhunt must say what it cannot tell.
func cannotTellCases() []adversarialCase {
	return []adversarialCase{
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
			exit:    exitAnomaly, message: `changed while it was read`, maxTime: bound(20 * time.Second), maxRSSMiB: 64,
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
