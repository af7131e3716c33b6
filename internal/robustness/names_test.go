package robustness

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileName is an op name that would retitle the terminal, clear it and
// overwrite the line, written as msprobe would escape it in JSON.
const hostileName = `Torch.sqrt\u001b]0;pwned\u0007\u001b[2J\r.0.forward`

// writeHostileDump writes a two-rank step whose origin op on rank 0 has
// the hostile name and whose all_reduce carries its NaN to rank 1, and
// returns the step folder.
func writeHostileDump(t *testing.T, in string) string {
	t.Helper()
	return writeNamedDump(t, in, hostileName)
}

// writeNamedDump is writeHostileDump with the origin op named name (as
// JSON escapes it).
func writeNamedDump(t *testing.T, in, name string) string {
	t.Helper()
	group := `{"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "g0"}`
	for r := 0; r < 2; r++ {
		var b strings.Builder
		b.WriteString(`{"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {` + "\n")
		sent := cleanTensor
		if r == 0 {
			fmt.Fprintf(&b, `"%s": {"input_args": [%s], "input_kwargs": {}, "output": [%s]},`+"\n", name, cleanTensor, nanTensor)
			sent = nanTensor
		}
		fmt.Fprintf(&b, `"Distributed.all_reduce.0.forward": {"input_args": [%s], "input_kwargs": {"group": %s}, "output": [%s]}`+"\n}}\n", sent, group, nanTensor)
		writeFile(t, filepath.Join(rank(in, r), "dump.json"), b.String())
	}
	return filepath.Join(in, "step0")
}

// noRawEscapes checks that no ESC, BEL or CR reached the output and that
// the name is there, escaped.
func noRawEscapes(t *testing.T, stdout string) {
	t.Helper()
	if strings.ContainsAny(stdout, "\x1b\x07\r") {
		t.Errorf("a raw ESC, BEL or CR from the dump reached the terminal:\n%q", clip(stdout))
	}
	if !strings.Contains(stdout, `x1b]0;pwned`) {
		t.Errorf("the escaped name is not in the output:\n%s", clip(stdout))
	}
}

// nameCases are names from a dump that must not act on the terminal.
func nameCases() []adversarialCase {
	return []adversarialCase{
		{
			class: "untrusted input", name: "name-terminal-escapes",
			input:  "an op name holding ESC]0;… (retitle), ESC[2J (clear) and CR",
			answer: "the name is printed with the escapes written out",
			setup: func(t *testing.T, in, out string) []string {
				return []string{"trace", writeHostileDump(t, in)}
			},
			exit: exitAnomaly, message: `pwned`, maxTime: 5 * time.Second, maxRSSMiB: 64,
			stdout: noRawEscapes,
		},
		{
			class: "untrusted input", name: "name-terminal-escapes-markdown",
			input:  "the same, --format markdown",
			answer: "the name is written with the escapes written out",
			setup: func(t *testing.T, in, out string) []string {
				return []string{"trace", writeHostileDump(t, in), "--format", "markdown"}
			},
			exit: exitAnomaly, message: `pwned`, maxTime: 5 * time.Second, maxRSSMiB: 64,
			stdout: noRawEscapes,
		},
		{
			class: "untrusted input", name: "name-terminal-escapes-json",
			input:  "the same, --format json",
			answer: "the name is kept as it is (JSON escapes it)",
			setup: func(t *testing.T, in, out string) []string {
				return []string{"trace", writeHostileDump(t, in), "--format", "json"}
			},
			exit: exitAnomaly, message: `pwned`, maxTime: 5 * time.Second, maxRSSMiB: 64,
			stdout: func(t *testing.T, s string) {
				var v struct {
					Origin struct{ Op string } `json:"origin"`
				}
				if err := json.Unmarshal([]byte(s), &v); err != nil {
					t.Fatal(err)
				}
				if want := "Torch.sqrt\x1b]0;pwned\x07\x1b[2J\r.0.forward"; v.Origin.Op != want {
					t.Errorf("origin.op %q, want %q", v.Origin.Op, want)
				}
			},
		},
	}
}
