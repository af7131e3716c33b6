package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// splitByRank copies the rank folders of dump into n node folders
// (nodeK/dump, rank r on node r%n).
func splitByRank(t *testing.T, dump, base string, n int) {
	t.Helper()
	steps, _ := filepath.Glob(filepath.Join(dump, "step*", "rank*"))
	if len(steps) == 0 {
		t.Fatalf("no rank folder under %s", dump)
	}
	for _, rd := range steps {
		r, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(rd), "rank"))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(base, "node"+strconv.Itoa(r%n), "dump", filepath.Base(filepath.Dir(rd)), filepath.Base(rd))
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(rd, "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// synthSplit writes a catalogued scenario into DIR/dump and, with nodes
// above 0, copies its rank folders to that many node folders under
// DIR/nodes; it returns DIR and the dump.
func synthSplit(t *testing.T, scenario string, nodes int) (dir, dump string) {
	t.Helper()
	dir = t.TempDir()
	dump = filepath.Join(dir, "dump")
	if _, stderr, code := runCLI(t, "synth", "--scenario", scenario, "-o", dump); code != 0 {
		t.Fatalf("synth: %s", stderr)
	}
	if nodes > 0 {
		splitByRank(t, dump, filepath.Join(dir, "nodes"), nodes)
	}
	return dir, dump
}

// summarize on each node folder, then trace on the folder of summaries,
// gives the verdict of trace on the dump, and the same exit status.
func TestSummarizeThenTrace(t *testing.T) {
	dir, dump := synthSplit(t, "sendrecv-carrier", 3)
	sums := filepath.Join(dir, "sums") + "/"
	for k := 0; k < 3; k++ {
		_, stderr, code := runCLI(t, "summarize", filepath.Join(dir, "nodes", "node{node}", "dump"), "--node-index", strconv.Itoa(k), "--nodes", "3", "-o", sums)
		if code != 0 || !strings.Contains(stderr, "summarised") {
			t.Fatalf("summarize node %d: exit %d: %s", k, code, stderr)
		}
	}
	files, _ := filepath.Glob(filepath.Join(sums, "summary-node*.jsonl"))
	if len(files) != 3 {
		t.Fatalf("summaries %v, want 3", files)
	}
	want, _, wcode := runCLI(t, "trace", dump, "--format", "json", "--timeline")
	got, stderr, gcode := runCLI(t, "trace", sums, "--format", "json")
	if wcode != 1 || gcode != wcode {
		t.Fatalf("exit %d joined, %d in one place: %s", gcode, wcode, stderr)
	}
	norm := func(s string, roots ...string) string {
		for _, r := range roots {
			s = strings.ReplaceAll(s, r, "ROOT")
		}
		return s
	}
	var roots []string
	for k := 0; k < 3; k++ {
		roots = append(roots, filepath.Join(dir, "nodes", "node"+strconv.Itoa(k), "dump"))
	}
	// the one thing a join cannot give: the origin rank's calls around the
	// root op, which lie in a dump.json on its node
	if withoutTimeline(t, norm(want, dump)) != withoutTimeline(t, norm(got, roots...)) {
		t.Errorf("joined verdict differs:\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(want, `"timeline": {`) || strings.Contains(got, `"timeline"`) {
		t.Errorf("the verdict in one place should have an origin timeline, the joined one none")
	}
	// the summary files may also be named one by one
	got2, _, _ := runCLI(t, append([]string{"trace", "--format", "json"}, files...)...)
	if got2 != got {
		t.Errorf("the files one by one give another verdict than their folder")
	}
	steps, _, code := runCLI(t, "trace", "--detail-steps", sums)
	if code != 0 || strings.TrimSpace(steps) == "" {
		t.Errorf("--detail-steps: exit %d, %q", code, steps)
	}
}

func TestSummarizeUsage(t *testing.T) {
	dir, dump := synthSplit(t, "log-negative", 0)
	sum := filepath.Join(dir, "one.jsonl")
	if _, stderr, code := runCLI(t, "summarize", dump, "-o", sum); code != 0 {
		t.Fatalf("summarize: %s", stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"summarize", dump}, "-o OUT is required"},
		{[]string{"summarize", dump, "-o", filepath.Join(dump, "sum.jsonl")}, "inside the dump"},
		{[]string{"summarize", dump, "-o", sum, "--jobs", "0"}, "--jobs 0"},
		{[]string{"summarize", dump, "-o", sum + "2", "--node-index", "4", "--nodes", "2"}, "--node-index 4: want below --nodes 2"},
		{[]string{"trace", dump, sum}, "not a nanhunt summary"},
		{[]string{"trace", sum, "-o", sum}, "same file"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// noLauncher clears the variables by which a launcher places a process,
// so that summarize sees none.
func noLauncher(t *testing.T) {
	t.Helper()
	for _, k := range []string{"TORCHELASTIC_RUN_ID", "GROUP_RANK", "SLURM_PROCID", "SLURM_JOB_ID", "JOB_COMPLETION_INDEX",
		"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "PMIX_NAMESPACE"} {
		t.Setenv(k, "")
	}
}

// Without a launcher or --node-index, two node folders summarised on one
// host into one folder get a file each, which join; without a job id no
// mark is left; with one, the marks of the same run another job left are
// removed, and nothing else.
func TestSummarizeWithoutLauncher(t *testing.T) {
	noLauncher(t)
	dir, _ := synthSplit(t, "log-negative", 2)
	sums := filepath.Join(dir, "sums") + "/"
	summarize := func(job string, k int) string {
		t.Helper()
		args := []string{"summarize", filepath.Join(dir, "nodes", "node"+strconv.Itoa(k), "dump"), "--run", "test", "-o", sums}
		if job != "" {
			args = append(args, "--job-id", job)
		}
		_, stderr, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("summarize node %d: exit %d: %s", k, code, stderr)
		}
		return stderr
	}
	for k := range 2 {
		if stderr := summarize("", k); !strings.Contains(stderr, "no job id shared by the nodes") {
			t.Errorf("node %d does not say that marks are off: %s", k, stderr)
		}
	}
	files, _ := filepath.Glob(filepath.Join(sums, "summary-*.jsonl"))
	marks, _ := filepath.Glob(filepath.Join(sums, ".nanhunt-lasting-*"))
	if len(files) != 2 || len(marks) != 0 {
		t.Fatalf("summaries %v and marks %v: want two summaries, no mark", files, marks)
	}
	if _, stderr, code := runCLI(t, "trace", sums); code != 1 {
		t.Errorf("trace of the two summaries: exit %d, want 1: %s", code, stderr)
	}
	// a later job of the same run: the marks of job 1 are removed, the
	// other files stay
	for k := range 2 {
		summarize("1", k)
	}
	marks, _ = filepath.Glob(filepath.Join(sums, ".nanhunt-lasting-*"))
	if len(marks) == 0 {
		t.Fatal("job 1 left no mark")
	}
	// named as the run's marks, but not marks: a file that is no mark, and
	// a link to a mark of job 1
	prefix := filepath.Base(marks[0])[:len(".nanhunt-lasting-")+13]
	mark, err := os.ReadFile(marks[0])
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "mark-copy.json")
	decoys := []string{filepath.Join(sums, prefix+"decoy.json"), filepath.Join(sums, prefix+"link.json"), target}
	for _, err := range []error{os.WriteFile(decoys[0], []byte("not a mark"), 0o644), os.WriteFile(target, mark, 0o644), os.Symlink(target, decoys[1])} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if stderr := summarize("2", 0); !strings.Contains(stderr, fmt.Sprintf("removed %d mark(s) another job of this run left", len(marks))) {
		t.Errorf("job 2 does not say it removed job 1's %d marks: %s", len(marks), stderr)
	}
	for _, d := range decoys {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("a file that is not a mark of the run was removed: %v", err)
		}
	}
}

// A summary is not written over by one of another run, node or selection
// (two nodes, two jobs or two phases given one file); a run made again
// replaces its own.
func TestSummarizeKeepsOtherSummaries(t *testing.T) {
	noLauncher(t)
	dir, dump := synthSplit(t, "log-negative", 0)
	sum := filepath.Join(dir, "sum.jsonl")
	if _, stderr, code := runCLI(t, "summarize", dump, "--run", "a", "--node-index", "0", "-o", sum); code != 0 {
		t.Fatalf("summarize: %s", stderr)
	}
	before, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--run", "b", "--node-index", "0"}, 2},
		{[]string{"--run", "a", "--node-index", "1"}, 2},
		{[]string{"--run", "a", "--node-index", "0", "--steps", "2"}, 2},
		{[]string{"--run", "a", "--node-index", "0"}, 0},
	} {
		_, stderr, code := runCLI(t, append([]string{"summarize", dump, "-o", sum}, c.args...)...)
		after, _ := os.ReadFile(sum)
		switch {
		case code != c.code:
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.code, stderr)
		case code == 2 && (!strings.Contains(stderr, "is not written over") || !bytes.Equal(after, before)):
			t.Errorf("%v: %q, and the summary changed: %v", c.args, stderr, !bytes.Equal(after, before))
		}
	}
}

// withoutTimeline is a JSON verdict without origin.timeline, re-encoded.
func withoutTimeline(t *testing.T, v string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		t.Fatal(err)
	}
	if o, ok := m["origin"].(map[string]any); ok {
		delete(o, "timeline")
	}
	delete(m, "ahead") // the statistics stay in each node's dump.json, as the timeline's calls do
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
