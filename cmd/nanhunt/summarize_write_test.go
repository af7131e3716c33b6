package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Summaries of one node and run written at once by several processes into
// one file never interleave: each writes a temporary file of its own and
// renames it over the summary, so the file is always one whole summary
// (the join reads it to its end line), and no temporary file stays.
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
		// read whole by the join: the NaN, and no damage
		stdout, _, code := runCLI(t, "trace", filepath.Join(sums, names[0]), "--format", "json")
		if code != 1 || strings.Contains(stdout, ": damaged (") || strings.Contains(stdout, "ends before its last line") {
			t.Fatalf("round %d: the summary joins with exit %d:\n%.2000s", round, code, stdout)
		}
	}
}
