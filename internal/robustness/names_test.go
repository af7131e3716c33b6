package robustness

import (
	"encoding/json"
	"fmt"
	"os"
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

// emptyRankFolders adds n rank folders holding nothing to step0, after
// the two real ones.
func emptyRankFolders(t *testing.T, in string, n int) {
	t.Helper()
	for r := 2; r < n+2; r++ {
		if err := os.Mkdir(filepath.Join(in, "step0", fmt.Sprintf("rank%d", r)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// nameCases are names from a dump that must not act on the terminal, and
// folders whose number alone must not cost time or memory.
func nameCases() []adversarialCase {
	return []adversarialCase{
		{
			class: "untrusted input", name: "step-number-past-int64",
			input:  "a step folder step9223372036854775807 beside step0, and step999999999",
			answer: "the first is no folder msprobe writes (named); the gap to the second is said as a range",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{steps: []string{"step0", "step9223372036854775807", "step999999999"}})
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `steps 1-999999998 not dumped`, maxTime: 5 * time.Second, maxRSSMiB: 64,
			stdout: func(t *testing.T, s string) {
				if !strings.Contains(s, "step9223372036854775807") {
					t.Errorf("the folder past nine digits is not named")
				}
			},
		},
		{
			class: "untrusted input", name: "empty-rank-folders",
			input:  "25,000 rank folders holding nothing beside two real ones (100,000 in the full run)",
			answer: "no file is read or counted for them; they are unread ranks, said as one range",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				emptyRankFolders(t, in, size(25_000, 100_000))
				return []string{"trace", in}
			},
			exit: exitAnomaly, message: `Read 2 files`, maxTime: 10 * time.Second, maxRSSMiB: 64,
			stdout: func(t *testing.T, s string) {
				if !strings.Contains(s, "could not be read (missing, empty") || strings.Count(s, "\n") > 200 {
					t.Errorf("the empty folders are not one row of unread ranks:\n%s", clip(s))
				}
			},
		},
		{
			class: "untrusted input", name: "skill-rank-131071-empty",
			input:  "one empty rank folder numbered 131,071 beside a real dump: 131,070 ranks not dumped or unread",
			answer: "--format skill lists them in time linear in the ranks (it took 3.8 s quadratic in them)",
			setup: func(t *testing.T, in, out string) []string {
				allReduceDump(t, in)
				if err := os.MkdirAll(filepath.Join(in, "step0", "rank131071"), 0o755); err != nil {
					t.Fatal(err)
				}
				return []string{"trace", in, "--format", "skill"}
			},
			exit: exitAnomaly, message: `"total_ranks": 131072`, maxTime: 2 * time.Second, maxRSSMiB: 64,
		},
		{
			class: "untrusted input", name: "group-lists-past-bounds",
			input:  "two clean rank files whose 1,100 collectives each name a process group of their own (1,100 distinct group_ranks lists)",
			answer: "the first 1,024 lists count, the bound is a warning naming the files; exit 0, ranks the lists name reported not dumped",
			setup: func(t *testing.T, in, out string) []string {
				manyGroupsDump(t, in, 1100)
				return []string{"trace", in}
			},
			exit: exitClean, message: `process group lists past the bounds of the byte search`, maxTime: 10 * time.Second, maxRSSMiB: 64,
		},
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

// allReduceDump writes a step of two ranks whose all_reduce on the world
// group carries a NaN rank 0's sqrt made to rank 1.
func allReduceDump(t *testing.T, in string) {
	t.Helper()
	head := `{"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {`
	reduce := func(in, out string) string {
		return `"Distributed.all_reduce.0.forward": {"input_args": [` + in + `], "input_kwargs": {}, "output": [` + out + `]}`
	}
	files := map[int]string{
		0: head + `"Torch.sqrt.0.forward": {"input_args": [` + cleanTensor + `], "input_kwargs": {}, "output": [` + nanTensor + `]}, ` + reduce(nanTensor, nanTensor) + "}}",
		1: head + `"Torch.sqrt.0.forward": {"input_args": [` + cleanTensor + `], "input_kwargs": {}, "output": [` + cleanTensor + `]}, ` + reduce(cleanTensor, nanTensor) + "}}",
	}
	for rank, text := range files {
		dir := filepath.Join(in, "step0", fmt.Sprintf("rank%d", rank))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "dump.json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// manyGroupsDump writes a clean step of two ranks whose n all_reduce calls
// each name a process group of their own, laid out as json.dump(indent=1)
// writes.
func manyGroupsDump(t *testing.T, in string, n int) {
	t.Helper()
	for rank := range 2 {
		var b strings.Builder
		b.WriteString("{\n \"task\": \"statistics\",\n \"level\": \"L1\",\n \"framework\": \"pytorch\",\n \"dump_data_dir\": null,\n \"data\": {")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			group := fmt.Sprintf(`{"type": "torch.ProcessGroup", "group_ranks": [%d, %d], "group_id": "g%d"}`, i%2, 2+i, i)
			fmt.Fprintf(&b, "\n  \"Distributed.all_reduce.%d.forward\": {\"input_args\": [%s], \"input_kwargs\": {\"group\": %s}, \"output\": [%s, %s]}", i, cleanTensor, group, cleanTensor, group)
		}
		b.WriteString("\n }\n}")
		dir := filepath.Join(in, "step0", fmt.Sprintf("rank%d", rank))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "dump.json"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
