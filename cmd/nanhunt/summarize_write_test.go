package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Summaries of one node and run written at once by several processes into
// one file never interleave: each writes a temporary file of its own and
// renames it over the summary, so the file is always one whole summary
// (its header, its records and its end line), and no temporary file stays.
func TestSummarizeSameNodeAtOnce(t *testing.T) {
	noLauncher(t)
	dir, _ := synthSplit(t, "log-negative", 2)
	sums := filepath.Join(dir, "sums")
	if err := os.Mkdir(sums, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"summarize", filepath.Join(dir, "nodes", "node1", "dump"), "--run", "r", "--job-id", "7", "--node-index", "1", "--nodes", "2", "-o", sums + "/"}
	for round := range 3 {
		var wg sync.WaitGroup
		codes := make([]int, 4)
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var out, errb bytes.Buffer
				codes[i] = run(args, &out, &errb)
			}()
		}
		wg.Wait()
		for i, c := range codes {
			if c != 0 {
				t.Fatalf("round %d, process %d: exit %d", round, i, c)
			}
		}
		ents, _ := os.ReadDir(sums)
		var names []string
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".nanhunt-lasting-") { // the node's mark
				names = append(names, e.Name())
			}
		}
		if len(names) != 1 || names[0] != "summary-node00001.jsonl" {
			t.Fatalf("round %d: the folder holds %v: want the summary and the mark alone", round, names)
		}
		wholeSummary(t, filepath.Join(sums, names[0]))
	}
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
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d is no JSON (%v): %.200s", i+1, err, l)
		}
		switch {
		case i == 0 && v.Header == nil, i > 0 && v.Header != nil:
			t.Fatalf("line %d: a header where it does not belong", i+1)
		case v.Record != nil:
			records++
		case v.End != nil && (i != len(lines)-1 || v.End.Records != records):
			t.Fatalf("line %d: an end line of %d records after %d, of %d lines", i+1, v.End.Records, records, len(lines))
		}
	}
	if !strings.Contains(lines[len(lines)-1], `"end"`) {
		t.Fatalf("no end line: %.200s", lines[len(lines)-1])
	}
}
