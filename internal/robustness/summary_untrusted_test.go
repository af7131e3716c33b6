package robustness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These cases treat a node summary, and the launcher's environment that
// places a summarising process, as the untrusted input they are: records
// edited by hand that their peers' collectives contradict, launcher
// variables that do not parse, several processes writing one summary,
// names that are not UTF-8, and numbers no summarize writes.

// tracedVerdict is what the cases read of a JSON verdict.
type tracedVerdict struct {
	Origin *struct {
		Step  int
		Ranks []int
	}
	Carrier *struct {
		FromRanks []int `json:"from_ranks"`
	}
	Candidates []struct {
		Step, Rank int
		Role       string
	}
}

// traceJSON runs nanhunt trace --format json on path while a case makes
// its inputs, and reads the verdict.
func traceJSON(t *testing.T, dir, path string) tracedVerdict {
	t.Helper()
	o := runBinary(t, dir, []string{"trace", path, "--format", "json"}, time.Minute, nil, &adversarialCase{})
	var v tracedVerdict
	if err := json.Unmarshal([]byte(o.stdout), &v); err != nil || v.Origin == nil {
		t.Fatalf("setup: the verdict of %s: %v\n%s", path, err, clip(o.stdout+o.stderr))
	}
	return v
}

// received is the lowest rank the verdict says received the value at its
// step.
func (v tracedVerdict) received(t *testing.T) int {
	for _, c := range v.Candidates {
		if c.Step == v.Origin.Step && c.Role == "received" {
			return c.Rank
		}
	}
	t.Fatal("setup: no rank received the value")
	return -1
}

// splitScenario writes a catalogued scenario of eight ranks to in/whole,
// spreads it over two node folders (ranks 0-3 and 4-7), summarises each
// into in/sums, and returns the verdict of the whole and the folder of
// summaries.
func splitScenario(t *testing.T, in, scenario string) (tracedVerdict, string) {
	t.Helper()
	whole, nodes, sums := filepath.Join(in, "whole"), filepath.Join(in, "nodes"), filepath.Join(in, "sums")
	synth(t, scenario, whole)
	splitRun(t, whole, nodes, byFours)
	summariseNodes(t, in, nodes, sums, 2, "--nodes", "2", "--run", "train", "--job-id", "7")
	return traceJSON(t, in, whole), sums
}

// byFours puts eight ranks on two nodes, four a node.
var byFours = map[int]int{0: 0, 1: 0, 2: 0, 3: 0, 4: 1, 5: 1, 6: 1, 7: 1}

// cutInHalf cuts a file to its first half, as a crash mid-write leaves it.
func cutInHalf(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b[:len(b)/2]))
}

// editRecord rewrites, in the summaries of a folder, the record of one
// rank-step with edit (its members as JSON), as a hand would.
func editRecord(t *testing.T, sums string, step, rank int, edit func(rec map[string]json.RawMessage)) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(sums, "*.jsonl"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		for i, l := range lines {
			var line struct{ Record map[string]json.RawMessage }
			if json.Unmarshal(l, &line) != nil || line.Record == nil ||
				string(line.Record["step"]) != strconv.Itoa(step) || string(line.Record["rank"]) != strconv.Itoa(rank) {
				continue
			}
			edit(line.Record)
			out, err := json.Marshal(map[string]any{"record": line.Record})
			if err != nil {
				t.Fatal(err)
			}
			lines[i] = append(out, '\n')
			writeFile(t, f, string(bytes.Join(lines, nil)))
			return
		}
	}
	t.Fatalf("setup: no summary in %s holds step %d rank %d", sums, step, rank)
}

// claimClean makes a record say its rank held no NaN or Inf.
func claimClean(rec map[string]json.RawMessage) {
	for _, k := range []string{"events", "collectives", "local", "order", "details", "suppressed"} {
		delete(rec, k)
	}
}

// mediumAndSays checks a text verdict's confidence and that it says what.
func mediumAndSays(what string) func(t *testing.T, stdout string) {
	return func(t *testing.T, stdout string) {
		if !strings.Contains(stdout, "Confidence: medium") || !strings.Contains(stdout, what) {
			t.Errorf("want confidence medium and %q:\n%s", what, clip(stdout))
		}
	}
}

// launcherCase is a summarize run under a launcher's environment with one
// variable that does not parse: refused, naming it and its quoted value,
// and nothing written.
func launcherCase(name, input string, env []string, message string) adversarialCase {
	return adversarialCase{
		class: "untrusted input", name: name, input: input,
		answer: "refused before anything is read or written, naming the variable and its value (quoted: a control character is an escape); exit 2",
		env:    env,
		setup: func(t *testing.T, in, out string) []string {
			synthRun(t, filepath.Join(in, "dump"), "0-1", "none", 0, 0)
			return []string{"summarize", filepath.Join(in, "dump"), "-o", out + "/"}
		},
		exit: exitError, message: message, maxTime: 10 * time.Second, maxRSSMiB: 64,
		after: nothingLeft,
	}
}

// nothingLeft fails the test when the child left a file in its folder.
func nothingLeft(t *testing.T, out string) {
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("left %v", names(ents))
	}
}

// summaryUntrustedCases are the cases of this file: summaries edited or
// damaged, launcher variables and node indices that do not parse, and
// fields past their bounds.
func summaryUntrustedCases() []adversarialCase {
	return slices.Concat(summaryEditedCases(), summarizeLaunchCases(), summaryFieldCases())
}

// summaryEditedCases are summaries edited to claim clean, and true records
// that contradict a damaged one.
func summaryEditedCases() []adversarialCase {
	const bound, rss = 10 * time.Second, 64
	return []adversarialCase{
		{
			class: "untrusted input", name: "summary-edited-claims-clean",
			input: "tensor parallel (TP 2, DP 4, 8 ranks; nanhunt synth tp-clip-sgd) on two nodes; the record of a rank that received the +Inf " +
				"through a tensor-parallel all_reduce at the origin step is edited by hand to say the rank held nothing non-finite",
			answer: "the origin still, and a warning that the summaries contradict each other, naming the step, the ranks and the edited summary; " +
				"confidence medium, with the reason; exit 1",
			setup: func(t *testing.T, in, o string) []string {
				v, sums := splitScenario(t, in, "tp-clip-sgd")
				editRecord(t, sums, v.Origin.Step, v.received(t), claimClean)
				return []string{"trace", sums}
			},
			exit: exitAnomaly, message: `step 1: the summaries contradict each other: ranks 2,4,6 received NaN from Distributed\.all_reduce\.9\.forward, .* and the records of rank 0 \(summary-node00000\.jsonl\)`,
			maxTime: bound, maxRSSMiB: rss, stdout: mediumAndSays("the summaries contradict each other at step 1"),
		},
		{
			class: "untrusted input", name: "summary-edited-sender-clean",
			input: "a pipeline (PP 4, DP 2, 8 ranks; nanhunt synth sendrecv-carrier) on two nodes; the record of the rank whose send carried " +
				"the +Inf to the next stage is edited by hand to say the rank held nothing non-finite",
			answer: "a warning that the next stage received the value by recv from that rank, whose record sent none; confidence medium; exit 1",
			setup: func(t *testing.T, in, o string) []string {
				v, sums := splitScenario(t, in, "sendrecv-carrier")
				editRecord(t, sums, v.Origin.Step, v.Carrier.FromRanks[0], claimClean)
				return []string{"trace", sums}
			},
			exit: exitAnomaly, message: `step 1: the summaries contradict each other: rank 0 received NaN from rank 2 by Distributed\.recv\.0\.forward, and the record of rank 2 \(summary-node00000\.jsonl\) holds no call that sent a non-finite value`,
			maxTime: bound, maxRSSMiB: rss, stdout: mediumAndSays("the summaries contradict each other at step"),
		},
		{
			class: "untrusted input", name: "summary-true-records-damaged-tp",
			input:  "the tensor-parallel run whose receiving rank's dump.json is cut in half at the origin step, summarised as it is (no edit)",
			answer: "the single-place verdict, with the damage named: records summarize wrote never contradict each other; exit 1",
			setup: func(t *testing.T, in, o string) []string {
				whole := filepath.Join(in, "whole")
				synth(t, "tp-clip-sgd", whole)
				v := traceJSON(t, in, whole)
				cutInHalf(t, filepath.Join(whole, fmt.Sprintf("step%d", v.Origin.Step), fmt.Sprintf("rank%d", v.received(t)), "dump.json"))
				splitRun(t, whole, filepath.Join(in, "nodes"), byFours)
				summariseNodes(t, in, filepath.Join(in, "nodes"), filepath.Join(in, "sums"), 2, "--nodes", "2")
				return []string{"trace", filepath.Join(in, "sums")}
			},
			exit: exitAnomaly, message: `is damaged`, maxTime: bound, maxRSSMiB: rss,
			stdout: func(t *testing.T, s string) {
				if strings.Contains(s, "contradict") {
					t.Errorf("true records contradict each other:\n%s", clip(s))
				}
			},
		},
	}
}

// summarizeLaunchCases are launcher variables that do not parse, a node
// template without an index, and two summarize runs of one node at once.
func summarizeLaunchCases() []adversarialCase {
	const bound, rss = 10 * time.Second, 64
	var out string // the folder of the running case
	return []adversarialCase{
		launcherCase("summarize-launcher-rank-path", "torchrun's RANK=../../x (with TORCHELASTIC_RUN_ID and LOCAL_WORLD_SIZE=2)",
			[]string{"TORCHELASTIC_RUN_ID=j1", "LOCAL_WORLD_SIZE=2", "RANK=../../x"}, regexp.QuoteMeta(`RANK="../../x" in the environment: want a number`)),
		launcherCase("summarize-launcher-rank-negative", "torchrun's RANK=-5",
			[]string{"TORCHELASTIC_RUN_ID=j1", "LOCAL_WORLD_SIZE=2", "RANK=-5"}, regexp.QuoteMeta(`RANK="-5"`)),
		launcherCase("summarize-launcher-rank-exponent", "torchrun's RANK=1e3",
			[]string{"TORCHELASTIC_RUN_ID=j1", "LOCAL_WORLD_SIZE=2", "RANK=1e3"}, regexp.QuoteMeta(`RANK="1e3"`)),
		launcherCase("summarize-launcher-group-rank-escape", "torchrun's GROUP_RANK holding a terminal escape (one process per node)",
			[]string{"GROUP_RANK=0\x1b]0;owned\a", "LOCAL_WORLD_SIZE=1"}, regexp.QuoteMeta(`GROUP_RANK="0\x1b]0;owned\a"`)),
		launcherCase("summarize-launcher-slurm-procid", "Slurm's SLURM_PROCID=-1",
			[]string{"SLURM_PROCID=-1", "SLURM_NTASKS=2", "SLURM_JOB_ID=991"}, regexp.QuoteMeta(`SLURM_PROCID="-1"`)),
		launcherCase("summarize-launcher-slurm-count", "Slurm's SLURM_NTASKS=0",
			[]string{"SLURM_PROCID=0", "SLURM_NTASKS=0", "SLURM_JOB_ID=991"}, regexp.QuoteMeta(`SLURM_NTASKS="0" in the environment: want a count from 1 to 131072`)),
		launcherCase("summarize-launcher-k8s-index", "a Kubernetes Indexed Job's JOB_COMPLETION_INDEX=1.5",
			[]string{"JOB_COMPLETION_INDEX=1.5"}, regexp.QuoteMeta(`JOB_COMPLETION_INDEX="1.5"`)),
		launcherCase("summarize-launcher-mpi-rank", "Open MPI's OMPI_COMM_WORLD_RANK=4 of OMPI_COMM_WORLD_SIZE=4",
			[]string{"OMPI_COMM_WORLD_RANK=4", "OMPI_COMM_WORLD_SIZE=4"}, regexp.QuoteMeta(`OMPI_COMM_WORLD_RANK="4" in the environment: want a number below OMPI_COMM_WORLD_SIZE=4`)),
		launcherCase("summarize-launcher-pmi-rank", "PMI_RANK=x",
			[]string{"PMI_RANK=x", "PMI_SIZE=2"}, regexp.QuoteMeta(`PMI_RANK="x"`)),
		launcherCase("summarize-launcher-job-id-path", "Slurm's SLURM_JOB_ID=../../etc/x (a job id with path separators)",
			[]string{"SLURM_PROCID=0", "SLURM_NTASKS=1", "SLURM_JOB_ID=../../etc/x"}, regexp.QuoteMeta(`SLURM_JOB_ID="../../etc/x" in the environment: want a job id of letters, digits and . _ - : @ + =, not "/"`)),
		launcherCase("summarize-launcher-job-id-control", "torchrun's TORCHELASTIC_RUN_ID holding a line feed and an escape",
			[]string{"TORCHELASTIC_RUN_ID=run\n\x1b[2J", "LOCAL_WORLD_SIZE=1", "GROUP_RANK=0"}, regexp.QuoteMeta(`TORCHELASTIC_RUN_ID="run\n\x1b[2J"`)),
		{
			class: "untrusted input", name: "summarize-node-template-no-index",
			input:  "{node} in the dump path, without a launcher or --node-index",
			answer: "refused: {node} is never read as node 0 while the header says no node; exit 2",
			setup: func(t *testing.T, in, o string) []string {
				mkdirs(t, filepath.Join(in, "node0"))
				synthRun(t, filepath.Join(in, "node0", "dump"), "0-1", "none", 0, 0)
				return []string{"summarize", filepath.Join(in, "node{node}", "dump"), "-o", o + "/"}
			},
			exit: exitError, message: `\{node\} needs this node's index`, maxTime: bound, maxRSSMiB: rss, after: nothingLeft,
		},
		{
			class: "untrusted input", name: "summarize-same-node-at-once",
			input:  "four summarize processes of the same node and run write one summary in the shared folder at once",
			answer: "each writes a temporary file of its own and renames it over the summary: the file is one whole summary, no temporary file stays; exit 0",
			setup: func(t *testing.T, in, o string) []string {
				out = o
				synthRun(t, filepath.Join(in, "dump"), "0-3", "log-negative", 2, 1)
				return sameNode(in, o)
			},
			during: func(in string, stop <-chan struct{}) {
				bin, err := binary()
				if err != nil {
					return
				}
				var cmds []*exec.Cmd
				for range 3 {
					c := exec.Command(bin, sameNode(in, out)...)
					c.Dir, c.Env = out, []string{"PATH=/usr/bin:/bin", "HOME=" + out}
					if c.Start() == nil {
						cmds = append(cmds, c)
					}
				}
				for _, c := range cmds {
					c.Wait()
				}
			},
			exit: exitClean, message: `summarised 16 rank-steps`, maxTime: bound, maxRSSMiB: rss,
			after: func(t *testing.T, o string) {
				ents, _ := os.ReadDir(o)
				var files []string
				for _, e := range ents {
					if !strings.HasPrefix(e.Name(), ".nanhunt-lasting-") {
						files = append(files, e.Name())
					}
				}
				if len(files) != 1 || files[0] != "summary-node00001.jsonl" {
					t.Fatalf("the folder holds %v: want the summary alone (and the node's mark)", files)
				}
				wholeSummary(t, filepath.Join(o, files[0]))
			},
		},
	}
}

// summaryFieldCases are summaries whose paths, counts or records are not
// what nanhunt writes: bytes that are not UTF-8, a huge node count, a
// damaged record, a huge group rank.
func summaryFieldCases() []adversarialCase {
	const bound, rss = 10 * time.Second, 64
	var damagedAt int // where summary-record-damaged cut its line
	return []adversarialCase{
		{
			class: "untrusted input", name: "summary-path-not-utf8",
			input: "a run with a NaN under a folder whose name is not UTF-8 (r\\xe9sultats\\xff, Latin-1 and a byte no encoding gives), " +
				"rank 3's dump.json at step 2 cut in half; summarised, and the summary joined with --format json",
			answer: "the summary and the verdict write the name's bytes as \\udcXX (Python's surrogateescape: os.fsencode gives them back); " +
				"the damaged rank's warning names the very file; exit 1",
			setup: func(t *testing.T, in, o string) []string {
				dump := filepath.Join(in, "r\xe9sultats\xff", "dump")
				mkdirs(t, filepath.Dir(dump))
				synthRun(t, dump, "0-3", "log-negative", 2, 1)
				cutInHalf(t, filepath.Join(dump, "step2", "rank3", "dump.json"))
				sums := filepath.Join(in, "sums")
				setupRun(t, in, 0, "summarize", dump, "-o", sums+"/", "--node-index", "0", "--nodes", "1")
				return []string{"trace", sums, "--format", "json"}
			},
			exit: exitAnomaly, message: `r\\udce9sultats\\udcff`, maxTime: bound, maxRSSMiB: rss,
			stdout: namesTheBytes,
		},
		{
			class: "untrusted input", name: "summary-header-node-count-huge",
			input:  "a summary whose header says its node is one of 1,099,511,627,776 (the join would count the missing nodes one by one)",
			answer: "refused at offset 0, naming the file and the count; exit 2",
			setup: func(t *testing.T, in, o string) []string {
				sums := summarisedRun(t, in)
				rewrite(t, filepath.Join(sums, "summary-node00000.jsonl"), `"count":1`, `"count":1099511627776`)
				return []string{"trace", sums}
			},
			exit: exitError, message: `summary-node00000\.jsonl: offset 0: not a summary nanhunt wrote: node count 1099511627776`, maxTime: bound, maxRSSMiB: rss,
		},
		{
			class: "untrusted input", name: "summary-record-damaged",
			input:  "a summary whose last record line (step 3, the next dumped step) is cut in the middle, its end line whole",
			answer: "a warning naming the file and the byte offset of the damaged line; the ranks it held after it are unread; exit 1 (the NaN is still found)",
			setup: func(t *testing.T, in, o string) []string {
				sums := summarisedRun(t, in)
				f := filepath.Join(sums, "summary-node00000.jsonl")
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				lines := bytes.SplitAfter(b, []byte("\n")) // header, records, end line, ""
				last := len(lines) - 3
				damagedAt = len(bytes.Join(lines[:last], nil))
				lines[last] = append(lines[last][:len(lines[last])/2:len(lines[last])/2], '\n')
				writeFile(t, f, string(bytes.Join(lines, nil)))
				return []string{"trace", sums}
			},
			exit: exitAnomaly, message: `summary-node00000\.jsonl: offset \d+: damaged \(`, maxTime: bound, maxRSSMiB: rss,
			stdout: func(t *testing.T, s string) {
				if !strings.Contains(s, fmt.Sprintf("summary-node00000.jsonl: offset %d: damaged", damagedAt)) {
					t.Errorf("no warning at offset %d:\n%s", damagedAt, clip(s))
				}
			},
		},
		{
			class: "untrusted input", name: "summary-group-rank-huge",
			input:  "a summary record naming rank 999,999,999 in a process group, joined while a node of the launcher's count sent no summary",
			answer: "the ranks without a summary are filled in up to rank 131,071 and said as ranges, in bounded time and memory; the origin, confidence medium; exit 1",
			setup: func(t *testing.T, in, o string) []string {
				sums := summarisedRun(t, in, "--nodes", "2")
				editRecord(t, sums, 2, 1, func(rec map[string]json.RawMessage) { rec["groups"] = json.RawMessage(`{"gX":[1,999999999]}`) })
				return []string{"trace", sums}
			},
			exit: exitAnomaly, message: regexp.QuoteMeta(`no summary from node(s) 1 of 2 (ranks 4-131071,999999999 of the job have no summary`), maxTime: bound, maxRSSMiB: rss,
		},
	}
}

// sameNode is the summarize of node 1 of the dump under in into the
// shared folder out.
func sameNode(in, out string) []string {
	return []string{"summarize", filepath.Join(in, "dump"), "--run", "r", "--job-id", "7", "--node-index", "1", "--nodes", "2", "-o", out + "/"}
}

// summarisedRun summarises a run of four ranks with a NaN born on rank 1 at
// step 2 as node 0 (of the --nodes given, else of 1) into in/sums.
func summarisedRun(t *testing.T, in string, extra ...string) string {
	t.Helper()
	synthRun(t, filepath.Join(in, "dump"), "0-3", "log-negative", 2, 1)
	sums := filepath.Join(in, "sums")
	if len(extra) == 0 {
		extra = []string{"--nodes", "1"}
	}
	setupRun(t, in, 0, append([]string{"summarize", filepath.Join(in, "dump"), "-o", sums + "/", "--node-index", "0"}, extra...)...)
	return sums
}

// mkdirs makes a folder and its parents.
func mkdirs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// rewrite replaces old by new, once, in a file.
func rewrite(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil || !bytes.Contains(b, []byte(old)) {
		t.Fatalf("setup: %s holds no %q (%v)", file, old, err)
	}
	writeFile(t, file, strings.Replace(string(b), old, new, 1))
}

// wholeSummary fails the test unless the file is one summary: a header,
// records, and an end line counting them, every line JSON.
func wholeSummary(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	records := 0
	for i, l := range lines {
		var v struct {
			Header, Record *json.RawMessage
			End            *struct{ Records int }
		}
		switch err := json.Unmarshal([]byte(l), &v); {
		case err != nil:
			t.Fatalf("line %d is no JSON (%v): %.200s", i+1, err, l)
		case (i == 0) != (v.Header != nil):
			t.Fatalf("line %d: a header where it does not belong, or none first", i+1)
		case v.Record != nil:
			records++
		case v.End != nil && (i != len(lines)-1 || v.End.Records != records):
			t.Fatalf("line %d: an end line of %d records after %d, of %d lines", i+1, v.End.Records, records, len(lines))
		}
	}
}

// surrogateByte is a byte that is not UTF-8 as a verdict writes it.
var surrogateByte = regexp.MustCompile(`\\udc([89a-f][0-9a-f])`)

// namesTheBytes checks that the JSON verdict names the damaged rank's
// dump.json by its bytes: each \udcXX of its "file" is the byte XX, as
// Python's os.fsencode reads it, and the file is there.
func namesTheBytes(t *testing.T, stdout string) {
	var v struct {
		Warnings []struct{ File json.RawMessage }
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("no JSON verdict: %v", err)
	}
	for _, w := range v.Warnings {
		lit := string(w.File)
		if !strings.HasSuffix(lit, `/step2/rank3/dump.json"`) {
			continue
		}
		raw := surrogateByte.ReplaceAllStringFunc(lit, func(m string) string {
			b, _ := strconv.ParseUint(m[4:], 16, 8)
			return fmt.Sprintf(`\u%04x`, 0xf000+b) // a placeholder that JSON reads
		})
		var s string
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			t.Fatalf("the warning's file %s: %v", lit, err)
		}
		path := []byte{}
		for _, r := range s {
			if r >= 0xf080 && r <= 0xf0ff {
				path = append(path, byte(r-0xf000))
			} else {
				path = append(path, string(r)...)
			}
		}
		if _, err := os.Stat(string(path)); err != nil {
			t.Errorf("the warning's file %s is no file: %v", lit, err)
		}
		return
	}
	t.Errorf("no warning names step2/rank3/dump.json:\n%s", clip(stdout))
}
