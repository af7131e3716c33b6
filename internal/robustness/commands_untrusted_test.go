package robustness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Cases of the other commands on the hostile names a dump holds: a step
// folder numbered past int64 and a gap of a billion steps, read by plan,
// export, summarize and repro as by trace; a dump folder named like a flag,
// given after "--" (as the Python functions give every path); and a report
// whose page cannot be written while its Markdown can.

// farSteps are the step folders of the cases of a number past int64: a
// real step, one no msprobe writes and one a billion steps later.
var farSteps = []string{"step0", "step9223372036854775807", "step999999999"}

// farStepCase is a command run on a clean two-rank dump of farSteps: it
// must answer in bounded time and memory, whatever the numbers.
func farStepCase(command, answer string, exit int, message string, args func(in, out string) []string) adversarialCase {
	return adversarialCase{
		class: "untrusted input", name: "step-number-past-int64-" + command,
		input:  "nanhunt " + command + " on a clean dump of step0, step9223372036854775807 and step999999999",
		answer: answer,
		setup: func(t *testing.T, in, out string) []string {
			writeDump(t, in, dumpSpec{steps: farSteps, clean: true})
			return args(in, out)
		},
		exit: exit, message: message, maxTime: 5 * time.Second, maxRSSMiB: 64,
	}
}

// farStepReproCase is repro on a tensor dump of farSteps, each holding
// the NaN (so that it lasts): the case of its root cause, at step 0, is
// written.
func farStepReproCase() adversarialCase {
	return adversarialCase{
		class: "untrusted input", name: "step-number-past-int64-repro",
		input:  "nanhunt repro on a tensor dump of step0, step9223372036854775807 and step999999999, each with a NaN from Torch.log",
		answer: "the case of the root cause at step 0 is written, in bounded time and memory",
		setup: func(t *testing.T, in, out string) []string {
			tensorDump(t, in, out, "", "x.pt")
			writeFile(t, filepath.Join(tensorData(in), "x.pt"), string(torchFile(tensorPickle, 12)))
			b, err := os.ReadFile(filepath.Join(rank(in, 0), "dump.json"))
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range farSteps[1:] {
				writeFile(t, filepath.Join(in, step, "rank0", "dump.json"), string(b))
			}
			return []string{"repro", in, "-o", filepath.Join(out, "case")}
		},
		exit: exitClean, message: `wrote the case of Torch\.log\.0\.forward, step 0, rank 0`, maxTime: 5 * time.Second, maxRSSMiB: 64,
	}
}

// dashDumpCase is a dump whose folder is named like a flag, given after
// "--": it is read as the dump, never taken for the flag.
func dashDumpCase(command, message string, exit int) adversarialCase {
	return adversarialCase{
		class: "untrusted input", name: "path-like-a-flag-" + command,
		input:  "nanhunt " + command + ` -- --help, where --help is the dump folder (the Python functions put "--" before every path)`,
		answer: "the folder is read as the dump, not taken for --help",
		setup: func(t *testing.T, in, out string) []string {
			writeDump(t, in, dumpSpec{})
			symlink(t, in, filepath.Join(out, "--help"))
			return []string{command, "--", "--help"}
		},
		exit: exit, message: message, maxTime: 5 * time.Second, maxRSSMiB: 64,
		stdout: func(t *testing.T, stdout string) {
			if strings.Contains(stdout, "Usage:") {
				t.Errorf("the folder was taken for --help:\n%s", clip(stdout))
			}
		},
	}
}

// reportFullDiskCase is report --markdown and --html on a disk that is
// full for any file over 8 KiB: the summary fits, the page does not.
func reportFullDiskCase() adversarialCase {
	return adversarialCase{
		class: "writes", name: "report-full-disk-keeps-markdown",
		input:  "report --markdown summary.md --html report.html of a saved verdict, on a disk that is full for any file over 8 KiB (the page)",
		answer: "the Markdown summary is written whole; the page is not, no piece of it is left, and the message names --html; exit 2",
		setup: func(t *testing.T, in, out string) []string {
			writeDump(t, filepath.Join(in, "dump"), dumpSpec{})
			o := runBinary(t, in, []string{"trace", filepath.Join(in, "dump"), "--format", "json"}, time.Minute, nil, &adversarialCase{})
			if o.code != exitAnomaly {
				t.Fatalf("setup: trace exit %d\n%s", o.code, clip(o.stderr))
			}
			writeFile(t, filepath.Join(in, "verdict.json"), o.stdout)
			return []string{"report", filepath.Join(in, "verdict.json"), "--markdown", "summary.md", "--html", "report.html"}
		},
		fileLimitKiB: 8,
		exit:         exitError, message: `--html report\.html was not written: .*file too large`, maxTime: 5 * time.Second, maxRSSMiB: 64,
		after: func(t *testing.T, out string) {
			b, err := os.ReadFile(filepath.Join(out, "summary.md"))
			if err != nil || !strings.Contains(string(b), "Torch.sqrt.0.forward") {
				t.Errorf("the Markdown summary was not written whole: %v\n%s", err, b)
			}
			if _, err := os.Stat(filepath.Join(out, "report.html")); err == nil {
				t.Errorf("report.html exists although it could not be written whole")
			}
			if l := leftovers(t, out); len(l) > 0 {
				t.Errorf("temporary files left: %v", l)
			}
		},
	}
}

// commandUntrustedCases are the cases of this file but the report's,
// which outputCases holds.
func commandUntrustedCases() []adversarialCase {
	return []adversarialCase{
		farStepCase("plan", "nothing to collect: the far folders cost no time or memory", exitClean, `nothing to collect`,
			func(in, out string) []string { return []string{"plan", in} }),
		farStepCase("export", "the two steps are exported; the first folder is named as ignored, the gap said as a range", exitClean,
			`steps 1-999999998 not dumped`,
			func(in, out string) []string { return []string{"export", in, "-o", filepath.Join(out, "parquet")} }),
		farStepCase("summarize", "steps 0 and 999999999 are summarised; the first folder is named as ignored", exitClean,
			`summarised 4 rank-steps \(steps 0,999999999\)`,
			func(in, out string) []string { return []string{"summarize", in, "-o", out + "/"} }),
		farStepReproCase(),
		dashDumpCase("trace", `Torch\.sqrt\.0\.forward`, exitAnomaly),
		dashDumpCase("plan", `Torch\.sqrt`, exitAnomaly),
	}
}
