package nanhunt_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt"
)

// noLauncher is an environment without a launcher's variables, so that
// the tests do not depend on the one they run under.
func noLauncher(string) string { return "" }

// Summarize writes node 0's summary of log-negative (a NaN on rank 2 at
// step 2 that lasts into step 3) into a shared folder under its index,
// stops after step 3, and Run on that summary gives the verdict Run gives
// on the dump.
func TestSummarize(t *testing.T) {
	run := generate(t, "log-negative")
	shared := t.TempDir() + "/"
	node := 0
	res, err := nanhunt.Summarize(context.Background(), nanhunt.SummarizeInputs{Dump: run.dump, Output: shared,
		NodeIndex: &node, Nodes: 1, JobID: "7", Getenv: noLauncher})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(shared, "summary-node00000.jsonl"); res.File != want || res.Shared != shared {
		t.Errorf("written to %q in %q, want %q", res.File, res.Shared, want)
	}
	if res.StoppedAfter == nil || *res.StoppedAfter != 3 || !slices.Equal(res.Steps, []int{1, 2, 3}) || res.Records != 12 {
		t.Errorf("steps %v, %d records, stopped after %v: want steps 1-3 of ranks 0-3, stopped after step 3", res.Steps, res.Records, res.StoppedAfter)
	}
	if res.JobID != "7" || res.MarksOff || res.Written == 0 || res.DumpBytes == 0 {
		t.Errorf("result %+v", res)
	}
	if info, err := os.Stat(res.File); err != nil || info.Size() != res.Written {
		t.Errorf("the summary file (%v) does not hold the %d bytes written", err, res.Written)
	}
	fromSummary, err := nanhunt.Run(context.Background(), nanhunt.Inputs{Summaries: []string{res.File}})
	if err != nil {
		t.Fatal(err)
	}
	fromDump, err := nanhunt.Run(context.Background(), nanhunt.Inputs{Dump: run.dump})
	if err != nil {
		t.Fatal(err)
	}
	a, b := fromSummary.Origin, fromDump.Origin
	if a == nil || b == nil || a.Step != 2 || a.Op != "Torch.log.0.forward" || a.Step != b.Step || a.Op != b.Op || !slices.Equal(a.Ranks, b.Ranks) {
		t.Errorf("origin from the summary %+v, from the dump %+v: want Torch.log.0.forward at step 2 from both", a, b)
	}
}

// Without Output the summary goes to Writer, whole: a header naming the
// schema first, an end line last.
func TestSummarizeToWriter(t *testing.T) {
	run := generate(t, "log-negative")
	var buf bytes.Buffer
	res, err := nanhunt.Summarize(context.Background(), nanhunt.SummarizeInputs{Dump: run.dump, Writer: &buf, Getenv: noLauncher})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if res.File != "" || int64(buf.Len()) != res.Written || len(lines) != res.Records+2 {
		t.Fatalf("file %q, %d bytes in %d lines, result %+v", res.File, buf.Len(), len(lines), res)
	}
	if !strings.Contains(lines[0], `"schema":"nanhunt/summary/v1"`) || !strings.HasPrefix(lines[len(lines)-1], `{"end":`) {
		t.Errorf("first line %.80s, last %.80s", lines[0], lines[len(lines)-1])
	}
}

// A place that cannot be is refused before anything is read or written:
// {node} without an index, an index not below the count, an output
// inside the dump.
func TestSummarizeRefuses(t *testing.T) {
	run := generate(t, "log-negative")
	three := 3
	for _, tc := range []struct {
		name string
		in   nanhunt.SummarizeInputs
		want string
	}{
		{"{node} without an index", nanhunt.SummarizeInputs{Dump: run.dump + "{node}", Output: t.TempDir() + "/"}, "{node} needs this node's index"},
		{"index not below the count", nanhunt.SummarizeInputs{Dump: run.dump, Output: t.TempDir() + "/", NodeIndex: &three, Nodes: 2}, "--node-index 3: want below --nodes 2"},
		{"inside the dump", nanhunt.SummarizeInputs{Dump: run.dump, Output: filepath.Join(run.dump, "summary.jsonl")}, "inside the dump"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Getenv = noLauncher
			if _, err := nanhunt.Summarize(context.Background(), tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(run.dump, "summary.jsonl")); err == nil {
		t.Errorf("a summary was written inside the dump")
	}
}

// With the default run name (the job's id before the dump path), a mark
// an earlier job left in the shared folder is found by the next job of the
// same dump path and removed, not left to pile up.
func TestSummarizeRemovesEarlierJobsMark(t *testing.T) {
	run := generate(t, "log-negative")
	shared := t.TempDir() + "/"
	marks := func() []string {
		m, _ := filepath.Glob(filepath.Join(shared, ".nanhunt-lasting-*"))
		return m
	}
	first, second := 0, 1
	if _, err := nanhunt.Summarize(context.Background(), nanhunt.SummarizeInputs{Dump: run.dump, Output: shared,
		NodeIndex: &first, Nodes: 2, JobID: "7", Getenv: noLauncher}); err != nil {
		t.Fatal(err)
	}
	left := marks()
	if len(left) != 1 {
		t.Fatalf("the first job left marks %v, want one", left)
	}
	res, err := nanhunt.Summarize(context.Background(), nanhunt.SummarizeInputs{Dump: run.dump, Output: shared,
		NodeIndex: &second, Nodes: 2, JobID: "8", Getenv: noLauncher})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RemovedMarks) != 1 || res.RemovedMarks[0] != filepath.Base(left[0]) {
		t.Errorf("the second job removed %v, want %s", res.RemovedMarks, filepath.Base(left[0]))
	}
	if after := marks(); len(after) != 1 || after[0] == left[0] {
		t.Errorf("marks after the second job: %v, want its own only", after)
	}
}
