package robustness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pipeCases are hangs: named pipes and endless devices in place of a dump.json,
// stack.json, construct.json, log or monitor CSV, and a sparse 50 GB file.
func pipeCases() []adversarialCase {
	return []adversarialCase{
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
	}
}

// slowParseCases are hangs and slow rejection inside a dump.json: zeros after
// the header, deep nesting, truncation and a huge number.
func slowParseCases() []adversarialCase {
	return []adversarialCase{
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
	}
}
