package robustness

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// setupRun runs the nanhunt binary while a case makes its inputs, with the
// case's own environment (no launcher's variables), and fails the test
// unless it exits with want. It returns what the binary wrote on stderr.
func setupRun(t *testing.T, dir string, want int, args ...string) string {
	t.Helper()
	o := runBinary(t, dir, args, time.Minute, nil, &adversarialCase{})
	if o.code != want {
		t.Fatalf("setup: nanhunt %s: exit %d, want %d\n%s", strings.Join(args, " "), o.code, want, clip(o.stderr))
	}
	return o.stderr
}

// synthRun writes a generated run of four ranks with nanhunt synth: the
// steps, and the fault ("none": clean) at a step on a rank.
func synthRun(t *testing.T, dir, steps, fault string, step, rank int) {
	t.Helper()
	setupRun(t, filepath.Dir(dir), 0, "synth", "--world-size", "4", "--steps", steps, "--file-mb", "0.05",
		"--fault", fault, "--fault-step", strconv.Itoa(step), "--fault-ranks", strconv.Itoa(rank), "-o", dir)
}

// splitRun copies each stepN/rankM folder of whole to nodes/node<K>/dump,
// K = nodeOf[M], as a cluster leaves them.
func splitRun(t *testing.T, whole, nodes string, nodeOf map[int]int) {
	t.Helper()
	rankDirs, _ := filepath.Glob(filepath.Join(whole, "step*", "rank*"))
	if len(rankDirs) == 0 {
		t.Fatalf("no rank folder under %s", whole)
	}
	for _, rd := range rankDirs {
		rank, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(rd), "rank"))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(nodes, "node"+strconv.Itoa(nodeOf[rank]), "dump", filepath.Base(filepath.Dir(rd)), filepath.Base(rd))
		files, _ := filepath.Glob(filepath.Join(rd, "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dst, filepath.Base(f)), string(b))
		}
	}
}

// Where four ranks lie on the nodes: two on each, or unevenly on three.
var (
	twoByTwo = map[int]int{0: 0, 1: 0, 2: 1, 3: 1}
	uneven   = map[int]int{0: 0, 1: 0, 2: 1, 3: 2}
)

// summariseNodes runs summarize on node folders 0 to n-1 of nodes (the
// {node} template) into the shared folder sums, each with the extra
// arguments, and returns what each wrote on stderr.
func summariseNodes(t *testing.T, in, nodes, sums string, n int, extra ...string) []string {
	t.Helper()
	var out []string
	for k := range n {
		args := append([]string{"summarize", filepath.Join(nodes, "node{node}", "dump"), "-o", sums + "/",
			"--node-index", strconv.Itoa(k)}, extra...)
		out = append(out, setupRun(t, in, 0, args...))
	}
	return out
}

// joinWithoutLast spreads the run generate writes into in/whole over count
// node folders (nodeOf), summarises every node but the last into in/sums
// with --nodes count, and returns the arguments of the trace of those
// summaries, with more arguments after them.
func joinWithoutLast(t *testing.T, in string, generate func(dir string), nodeOf map[int]int, count int, more ...string) []string {
	t.Helper()
	generate(filepath.Join(in, "whole"))
	splitRun(t, filepath.Join(in, "whole"), filepath.Join(in, "nodes"), nodeOf)
	summariseNodes(t, in, filepath.Join(in, "nodes"), filepath.Join(in, "sums"), count-1, "--nodes", strconv.Itoa(count))
	return append([]string{"trace", filepath.Join(in, "sums")}, more...)
}

// generated is a run of four ranks and steps 0-3 that synthRun writes, the
// fault ("none": clean) at a step on a rank.
func generated(t *testing.T, fault string, step, rank int) func(dir string) {
	return func(dir string) { synthRun(t, dir, "0-3", fault, step, rank) }
}

// marksIn lists the hidden marks in a folder.
func marksIn(t *testing.T, dir string) []string {
	t.Helper()
	marks, err := filepath.Glob(filepath.Join(dir, ".nanhunt-lasting-*"))
	if err != nil {
		t.Fatal(err)
	}
	return marks
}

// lookAlikes writes, beside the marks of the run in sums, a file named as
// one that holds no mark and a link named as one, and returns them: no
// summarize may remove them.
func lookAlikes(t *testing.T, sums, prefix string) []string {
	t.Helper()
	decoy, link := filepath.Join(sums, prefix+"decoy.json"), filepath.Join(sums, prefix+"link.json")
	writeFile(t, decoy, "not a mark\n")
	symlink(t, decoy, link)
	return []string{decoy, link}
}

// stillThere fails the test for each path that is gone.
func stillThere(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("setup: %s was removed: %v", p, err)
		}
	}
}

// lastingAtFive is a run of steps 0-7 whose +Inf is born on rank 3 at
// step 5 and lasts; the nodes hold its ranks two by two.
func lastingAtFive(t *testing.T, in string) (nodes, sums string) {
	t.Helper()
	synthRun(t, filepath.Join(in, "whole"), "0-7", "exp-overflow", 5, 3)
	nodes, sums = filepath.Join(in, "nodes"), filepath.Join(in, "sums")
	splitRun(t, filepath.Join(in, "whole"), nodes, twoByTwo)
	return nodes, sums
}

// The first line of a verdict on a real +Inf at step 5 on rank 3.
const bornAtFive = `^nanhunt: the first Inf was born at step 5 on rank 3, in Torch\.exp\.0\.forward`

// summaryCleanCases are summaries a join must not call clean: marks that
// another job left, a node that stopped on a mark whose anomaly no summary
// holds, a node that sent no summary, and summaries that would overwrite
// one another.
func summaryCleanCases() []adversarialCase {
	return slices.Concat(summaryMarkCases(), summaryMissingNodeCases(), summaryOverwriteCases())
}

// summaryMarkCases are marks another job left, and a node that stopped on a
// mark whose anomaly no summary holds.
func summaryMarkCases() []adversarialCase {
	const bound, rss = 10 * time.Second, 64
	return []adversarialCase{
		{
			class: "summaries", name: "summary-stale-mark-same-run",
			input: "a real +Inf at step 5 on rank 3 (4 ranks, steps 0-7) on two node folders; the shared folder holds the marks of an earlier job " +
				"of the same --run that stopped after step 2 (its summaries deleted, its hidden marks left), a file named as a mark that is none, and a link named as one",
			answer: "each node removes the earlier job's marks and nothing else, reads on to step 6; the join finds the +Inf at step 5, exit 1",
			setup: func(t *testing.T, in, out string) []string {
				synthRun(t, filepath.Join(in, "earlier"), "0-3", "log-negative", 1, 0)
				splitRun(t, filepath.Join(in, "earlier"), filepath.Join(in, "old"), twoByTwo)
				nodes, sums := lastingAtFive(t, in)
				summariseNodes(t, in, filepath.Join(in, "old"), sums, 2, "--nodes", "2", "--run", "train", "--job-id", "990")
				old := marksIn(t, sums)
				if len(old) == 0 {
					t.Fatal("setup: the earlier job left no mark")
				}
				sums0, _ := filepath.Glob(filepath.Join(sums, "*.jsonl"))
				for _, s := range sums0 {
					os.Remove(s)
				}
				keep := lookAlikes(t, sums, filepath.Base(old[0])[:len(".nanhunt-lasting-")+13])
				for k, stderr := range summariseNodes(t, in, nodes, sums, 2, "--nodes", "2", "--run", "train", "--job-id", "991") {
					if (k == 0 && !strings.Contains(stderr, fmt.Sprintf("removed %d mark(s)", len(old)))) || strings.Contains(stderr, "stopped after step 2") {
						t.Errorf("setup: node %d followed or kept the earlier job's marks:\n%s", k, stderr)
					}
				}
				stillThere(t, keep...)
				for _, m := range old {
					if _, err := os.Lstat(m); err == nil {
						t.Errorf("setup: the earlier job's mark %s is still there", m)
					}
				}
				return []string{"trace", sums}
			},
			exit: exitAnomaly, message: bornAtFive, maxTime: bound, maxRSSMiB: rss,
		},
		{
			class: "summaries", name: "summary-stale-mark-no-job-id",
			input:  "the same +Inf at step 5; the shared folder holds a mark an older nanhunt left for the same dump path (the default run name) after step 2, without a job id; no launcher, no --job-id",
			answer: "no node follows it (without a job id shared by the nodes no mark is followed or left) and it is removed; the join finds the +Inf at step 5, exit 1",
			setup: func(t *testing.T, in, out string) []string {
				nodes, sums := lastingAtFive(t, in)
				run := filepath.Join(nodes, "node{node}", "dump")
				h := sha256.Sum256([]byte(run))
				stale := filepath.Join(sums, ".nanhunt-lasting-"+hex.EncodeToString(h[:6])+"-node_0.json")
				writeFile(t, stale, fmt.Sprintf(`{"run": %q, "mode": "", "after": 2, "node": "node 0"}`, run))
				for k, stderr := range summariseNodes(t, in, nodes, sums, 2, "--nodes", "2") {
					if strings.Contains(stderr, "stopped after step 2") || !strings.Contains(stderr, "no job id shared by the nodes") {
						t.Errorf("setup: node %d:\n%s", k, stderr)
					}
				}
				if marks := marksIn(t, sums); len(marks) != 0 {
					t.Errorf("setup: marks left %v, want none", marks)
				}
				return []string{"trace", sums}
			},
			exit: exitAnomaly, message: bornAtFive, maxTime: bound, maxRSSMiB: rss,
		},
		{
			class: "summaries", name: "summary-marker-missing",
			input: "the same +Inf at step 5; a node of the same job left a mark after step 2 and its summary never came (its ranks held a NaN at steps 1-2); " +
				"the two nodes of the +Inf stop after step 2 on that mark",
			answer: "the join holds no anomaly lasting into step 2: steps 3-7 are unread (not summarised), never clean; exit 3",
			setup: func(t *testing.T, in, out string) []string {
				synthRun(t, filepath.Join(in, "other"), "0-3", "log-negative", 1, 0)
				nodes, sums := lastingAtFive(t, in)
				setupRun(t, in, 0, "summarize", filepath.Join(in, "other"), "-o", sums+"/", "--run", "train", "--job-id", "991")
				lost, _ := filepath.Glob(filepath.Join(sums, "*.jsonl"))
				if len(lost) != 1 || len(marksIn(t, sums)) != 1 {
					t.Fatalf("setup: the marking node wrote %v and marks %v", lost, marksIn(t, sums))
				}
				os.Remove(lost[0])
				for k, stderr := range summariseNodes(t, in, nodes, sums, 2, "--nodes", "2", "--run", "train", "--job-id", "991") {
					if !strings.Contains(stderr, "stopped after step 2") {
						t.Errorf("setup: node %d did not stop on the mark:\n%s", k, stderr)
					}
				}
				return []string{"trace", sums}
			},
			exit: exitIncomplete, message: `^nanhunt: no NaN or Inf in what could be read; steps 3-7 \(ranks 0-3\) could not be read\.`, maxTime: bound, maxRSSMiB: rss,
			stdout: func(t *testing.T, s string) {
				if !regexp.MustCompile(`step 3 +ranks 0-3 +not summarised`).MatchString(s) {
					t.Errorf("the unread table does not say the steps were not summarised:\n%s", clip(s))
				}
			},
		},
	}
}

// summaryMissingNodeCases are joins where a node sent no summary.
func summaryMissingNodeCases() []adversarialCase {
	const bound, rss = 10 * time.Second, 64
	return []adversarialCase{
		{
			class: "summaries", name: "summary-missing-node-clean",
			input:  "a clean run (4 ranks, steps 0-3), two ranks a node; node 1 of 2 sends no summary",
			answer: "its ranks 2,3 (where node 0's lie tells them) are unread at every step; exit 3",
			setup: func(t *testing.T, in, out string) []string {
				return joinWithoutLast(t, in, generated(t, "none", 0, 0), twoByTwo, 2)
			},
			exit:    exitIncomplete,
			message: `^nanhunt: no NaN or Inf in what could be read; steps 0-3 \(ranks 2,3\) could not be read; no summary came from node 1 of 2 \(ranks 2,3\)\.`,
			maxTime: bound, maxRSSMiB: rss,
		},
		{
			class: "summaries", name: "summary-missing-node-ranks-unknown",
			input:  "the clean run on three nodes holding 2, 1 and 1 ranks; node 2 of 3 sends no summary",
			answer: "which ranks it held cannot be told: the node is named, no step is called clean; exit 3",
			setup: func(t *testing.T, in, out string) []string {
				return joinWithoutLast(t, in, generated(t, "none", 0, 0), uneven, 3, "--format", "json")
			},
			exit: exitIncomplete, message: `"missing_nodes"`, maxTime: bound, maxRSSMiB: rss,
			stdout: func(t *testing.T, s string) {
				if !strings.Contains(s, `"complete": false`) || strings.Contains(s, `"status": "clean"`) ||
					!regexp.MustCompile(`"node": 2,\s+"of": 3,\s+"ranks": \[\]`).MatchString(s) {
					t.Errorf("want complete false, no clean step, node 2 of 3 with its ranks unknown:\n%s", clip(s))
				}
			},
		},
		{
			class: "summaries", name: "summary-missing-node-anomaly",
			input:  "a NaN born on rank 1 at step 2 (4 ranks, two a node); node 1 of 2 sends no summary",
			answer: "the origin, with confidence medium and a reason naming ranks 2,3, which have no summary; exit 1",
			setup: func(t *testing.T, in, out string) []string {
				return joinWithoutLast(t, in, generated(t, "log-negative", 2, 1), twoByTwo, 2)
			},
			exit: exitAnomaly, message: `no summary from node\(s\) 1 of 2 \(ranks 2,3 of the job have no summary\): one of their ranks may have made it first`,
			maxTime: bound, maxRSSMiB: rss,
			stdout: func(t *testing.T, s string) {
				if !strings.HasPrefix(s, "nanhunt: the first NaN was born at step 2 on rank 1") || !strings.Contains(s, "Confidence: medium") {
					t.Errorf("want the origin at step 2 on rank 1, confidence medium:\n%s", clip(s))
				}
			},
		},
		{
			class: "summaries", name: "summary-missing-node-collective",
			input:  "a float16 all_reduce that sums past 65504 on every rank (nanhunt synth allreduce-overflow) on three nodes holding 2, 1 and 1 ranks; node 2 of 3 sends no summary",
			answer: `the collective is the origin "on every rank read", naming the node that sent none, never "on every rank"; step 1 is "not read whole", not clean; exit 1`,
			setup: func(t *testing.T, in, out string) []string {
				return joinWithoutLast(t, in, func(dir string) { synth(t, "allreduce-overflow", dir) }, uneven, 3)
			},
			exit: exitAnomaly, message: regexp.QuoteMeta(`received finite values on every rank read (no summary from node 2 of 3 (its ranks unknown))`),
			maxTime: bound, maxRSSMiB: rss,
			stdout: func(t *testing.T, s string) {
				if strings.Contains(s, "on every rank and") || strings.Contains(s, "step 1 clean") {
					t.Errorf("a sentence claims every rank, or a step without the node's ranks clean:\n%s", clip(s))
				}
			},
		},
	}
}

// summaryOverwriteCases are summaries that would overwrite one another.
func summaryOverwriteCases() []adversarialCase {
	const bound, rss = 10 * time.Second, 64
	return []adversarialCase{
		{
			class: "summaries", name: "summary-same-host",
			input:  "two node folders of the +Inf run summarised on one host into one folder, without a launcher or --node-index",
			answer: "two summaries (named by host and a hash of the folder), joined whole: the +Inf at step 5, complete; exit 1",
			setup: func(t *testing.T, in, out string) []string {
				nodes, sums := lastingAtFive(t, in)
				for k := range 2 {
					setupRun(t, in, 0, "summarize", filepath.Join(nodes, "node"+strconv.Itoa(k), "dump"), "-o", sums+"/", "--run", "train")
				}
				if files, _ := filepath.Glob(filepath.Join(sums, "*.jsonl")); len(files) != 2 {
					t.Fatalf("setup: summaries %v, want two", files)
				}
				return []string{"trace", sums, "--format", "json"}
			},
			exit: exitAnomaly, message: `"complete": true`, maxTime: bound, maxRSSMiB: rss,
		},
		{
			class: "summaries", name: "summary-overwrite-other-run",
			input:  "-o names the summary of another run (or node, dump folder, --steps)",
			answer: "refused before anything is written, saying what the file holds; the file is unchanged",
			setup: func(t *testing.T, in, out string) []string {
				nodes, sums := lastingAtFive(t, in)
				target := filepath.Join(sums, "node.jsonl")
				if err := os.MkdirAll(sums, 0o755); err != nil {
					t.Fatal(err)
				}
				setupRun(t, in, 0, "summarize", filepath.Join(nodes, "node0", "dump"), "-o", target, "--run", "a")
				return []string{"summarize", filepath.Join(nodes, "node0", "dump"), "-o", target, "--run", "b"}
			},
			exit: exitError, message: `holds the summary of run "a" .*: it is not written over by the summary of run "b"`, maxTime: bound, maxRSSMiB: rss,
		},
	}
}
