package robustness

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// leftovers lists the files under dir whose names end in one of the
// suffixes, and the temporary files outputs are written through.
func leftovers(t *testing.T, dir string, suffixes ...string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		name := d.Name()
		for _, s := range suffixes {
			if strings.HasSuffix(name, s) {
				out = append(out, p)
			}
		}
		if strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// verdictFile checks that out/name holds a whole JSON verdict with an
// anomaly.
func verdictFile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the verdict was not written: %v", err)
	}
	var v struct{ Anomaly bool }
	if err := json.Unmarshal(b, &v); err != nil || !v.Anomaly {
		t.Errorf("%s is not the verdict (anomaly %v, %v)", path, v.Anomaly, err)
	}
}

// bigExportDump writes eight steps of two ranks, each file of a few MB,
// so that an export is still writing when it is stopped.
func bigExportDump(t *testing.T, in string) {
	t.Helper()
	var steps []string
	for s := range 8 {
		steps = append(steps, "step"+string(rune('0'+s)))
	}
	writeDump(t, in, dumpSpec{steps: steps, padEntries: 20_000, dumpOnly: true})
}

// firstParquet reports whether an export wrote its first whole file.
func firstParquet(out string) bool {
	found := false
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// outputCases are outputs that fail or are stopped half-way: each output
// is written or fails on its own, and nothing partial survives.
func outputCases() []adversarialCase {
	return []adversarialCase{
		{
			class: "writes", name: "html-full-disk-keeps-verdict",
			input:  "trace -o verdict.json --html report.html on a disk that fills up during the HTML page",
			answer: "the verdict is written; the page is not, no piece of it is left, and the message names --html; exit 2",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				return []string{"trace", in, "--format", "json", "-o", "verdict.json", "--html", "report.html"}
			},
			fileLimitKiB: 256,
			exit:         exitError, message: `--html report\.html was not written`, maxTime: 10 * time.Second, maxRSSMiB: 64,
			after: func(t *testing.T, out string) {
				verdictFile(t, filepath.Join(out, "verdict.json"))
				if _, err := os.Stat(filepath.Join(out, "report.html")); err == nil {
					t.Errorf("report.html exists although it could not be written whole")
				}
				if l := leftovers(t, out); len(l) > 0 {
					t.Errorf("temporary files left: %v", l)
				}
			},
		},
		{
			class: "writes", name: "html-full-disk-json-stdout",
			input:  "trace --format json --html report.html on a disk that fills up during the page",
			answer: "standard output holds the verdict, and only it; the message names --html; exit 2",
			setup: func(t *testing.T, in, out string) []string {
				writeDump(t, in, dumpSpec{})
				return []string{"trace", in, "--format", "json", "--html", "report.html"}
			},
			fileLimitKiB: 256,
			exit:         exitError, message: `--html report\.html was not written`, maxTime: 10 * time.Second, maxRSSMiB: 64,
			stdout: func(t *testing.T, s string) {
				dec := json.NewDecoder(strings.NewReader(s))
				var v struct {
					Anomaly bool
					Error   any
				}
				if err := dec.Decode(&v); err != nil || !v.Anomaly || v.Error != nil {
					t.Errorf("stdout is not the verdict alone: %v %+v", err, v)
				}
				if dec.More() {
					t.Errorf("stdout holds more than one JSON object")
				}
			},
		},
		exportSignalCase("SIGTERM", "SIGTERM to export once its first Parquet file is written", syscall.SIGTERM),
		exportSignalCase("SIGINT", "SIGINT (Ctrl-C) to export once its first Parquet file is written", syscall.SIGINT),
		exportSignalCase("SIGHUP", "SIGHUP (the terminal closed) to export once its first Parquet file is written", syscall.SIGHUP),
		synthSignalCase("SIGTERM", syscall.SIGTERM),
		synthSignalCase("SIGINT", syscall.SIGINT),
		reportFullDiskCase(),
		exportFullDiskCase(),
	}
}

// exportFullDiskCase is an export whose files cannot be written whole (a
// full disk): nothing of the set is left, not even the partition folders
// of the files that failed.
func exportFullDiskCase() adversarialCase {
	return adversarialCase{
		class: "writes", name: "export-full-disk",
		input:  "export on a full disk (no file may grow past 64 KiB)",
		answer: "exit 2 naming the file it could not write; no Parquet file, manifest, .partial file or partition folder left",
		setup: func(t *testing.T, in, out string) []string {
			bigExportDump(t, in)
			return []string{"export", in, "-o", "parquet", "--jobs", "2"}
		},
		fileLimitKiB: 64,
		exit:         exitError, message: `part-0\.parquet.*file too large`, maxTime: 10 * time.Second, maxRSSMiB: 64,
		after: func(t *testing.T, out string) {
			if l := leftovers(t, out, ".partial", ".parquet", "_nanhunt_export.json"); len(l) > 0 {
				t.Errorf("a failed export left %v", l)
			}
			root := filepath.Join(out, "parquet")
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() && p != root {
					t.Errorf("a failed export left the folder %s", p)
				}
				return nil
			})
		},
	}
}

// exportSignalCase is an export stopped by sig once its first Parquet file
// is written: SIGTERM, SIGINT and SIGHUP alike leave nothing of the set.
func exportSignalCase(name, input string, sig syscall.Signal) adversarialCase {
	return adversarialCase{
		class: "writes", name: "export-" + strings.ToLower(name),
		input:  input,
		answer: "no .partial file, no Parquet file of the unfinished set, no manifest; exit 2",
		setup: func(t *testing.T, in, out string) []string {
			bigExportDump(t, in)
			return []string{"export", in, "-o", "parquet", "--jobs", "1"}
		},
		signal: sig, signalWhen: firstParquet,
		exit: exitError, message: `interrupted`, maxTime: 10 * time.Second, maxRSSMiB: 64,
		after: func(t *testing.T, out string) {
			if l := leftovers(t, out, ".partial", ".parquet", "_nanhunt_export.json"); len(l) > 0 {
				t.Errorf("a stopped export left %v", l)
			}
		},
	}
}

// synthSignalCase is a synth run stopped by sig once its first dump.json
// is written: the folder it made is removed, nothing of the run is left.
func synthSignalCase(name string, sig syscall.Signal) adversarialCase {
	return adversarialCase{
		class: "writes", name: "synth-" + strings.ToLower(name),
		input:  name + " to synth (with --log-dir and --monitor-dir) once the first dump.json of a 6-step, 8-rank run is written",
		answer: "it stops at the end of the step, removes the folder it made and the training log and monitor files it wrote; exit 2, \"interrupted\"",
		setup: func(t *testing.T, in, out string) []string {
			return []string{"synth", "--world-size", "8", "--steps", "0-5", "--file-mb", "4", "--fault", "log-negative", "--fault-step", "4", "-o", "run",
				"--log-dir", "log", "--monitor-dir", "monitor"}
		},
		signal: sig, signalWhen: func(out string) bool {
			m, _ := filepath.Glob(filepath.Join(out, "run", "step*", "rank*", "dump.json"))
			return len(m) > 0
		},
		exit: exitError, message: `interrupted`, maxTime: 10 * time.Second, maxRSSMiB: 64,
		after: func(t *testing.T, out string) {
			if _, err := os.Stat(filepath.Join(out, "run")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a stopped synth left its folder: %v", err)
			}
			for _, side := range []string{"log", "monitor"} {
				filepath.WalkDir(filepath.Join(out, side), func(p string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						t.Errorf("a stopped synth left %s", p)
					}
					return nil
				})
			}
		},
	}
}
