package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Launcher variables that do not parse, and flags that place no node, are
// refused with exit status 2, naming the variable or flag and its value
// (escaped), and nothing is written; {node} without an index is refused
// rather than read as node 0, so the folder read and the header agree.
func TestSummarizeRefusesPlace(t *testing.T) {
	_, dump := synthSplit(t, "log-negative", 0)
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"torchrun RANK a path", map[string]string{"TORCHELASTIC_RUN_ID": "j1", "LOCAL_WORLD_SIZE": "2", "RANK": "../../x"}, nil, `RANK="../../x" in the environment`},
		{"torchrun RANK negative", map[string]string{"TORCHELASTIC_RUN_ID": "j1", "LOCAL_WORLD_SIZE": "2", "RANK": "-5"}, nil, `RANK="-5"`},
		{"torchrun RANK 1e3", map[string]string{"TORCHELASTIC_RUN_ID": "j1", "LOCAL_WORLD_SIZE": "2", "RANK": "1e3"}, nil, `RANK="1e3"`},
		{"torchrun GROUP_RANK escape", map[string]string{"GROUP_RANK": "0\x1b]0;x\a", "LOCAL_WORLD_SIZE": "1"}, nil, `GROUP_RANK="0\x1b]0;x\a"`},
		{"slurm job id path", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_JOB_ID": "7/../../x"}, nil, `SLURM_JOB_ID="7/../../x"`},
		{"slurm count", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "many"}, nil, `SLURM_NTASKS="many"`},
		{"kubernetes index", map[string]string{"JOB_COMPLETION_INDEX": "1.5"}, nil, `JOB_COMPLETION_INDEX="1.5"`},
		{"mpi rank", map[string]string{"OMPI_COMM_WORLD_RANK": "x"}, nil, `OMPI_COMM_WORLD_RANK="x"`},
		{"pmi rank", map[string]string{"PMI_RANK": "1", "PMI_SIZE": "1"}, nil, `PMI_RANK="1" in the environment: want a number below PMI_SIZE=1`},
		{"job id flag", nil, []string{"--job-id", "a/b"}, `--job-id "a/b"`},
		{"node index flag", nil, []string{"--node-index", "-5"}, "--node-index -5"},
		{"nodes flag", nil, []string{"--nodes", "0"}, "--nodes 0"},
		{"index against launcher count", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "2"}, []string{"--node-index", "3"}, "--node-index 3: want below the node count 2 that slurm's variables give"},
		{"{node} without an index", nil, []string{"--run", "r"}, `{node} needs this node's index`},
	} {
		t.Run(c.name, func(t *testing.T) {
			noLauncher(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			out := filepath.Join(t.TempDir(), "sums") + "/"
			arg := dump
			if c.name == "{node} without an index" {
				arg = filepath.Join(filepath.Dir(dump), "node{node}")
			}
			_, stderr, code := runCLI(t, append([]string{"summarize", arg, "-o", out}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.ContainsAny(stderr, "\x1b\a") {
				t.Errorf("exit %d, %q: want 2 and %q, no control character", code, stderr, c.want)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("wrote %v", ents)
			}
		})
	}
}

// With an index, {node} in DUMP and -o is the index the header records.
func TestSummarizeNodeTemplateAgrees(t *testing.T) {
	noLauncher(t)
	dir, _ := synthSplit(t, "log-negative", 2)
	t.Setenv("SLURM_PROCID", "1")
	t.Setenv("SLURM_NTASKS", "2")
	out := filepath.Join(dir, "sums{node}.jsonl")
	if _, stderr, code := runCLI(t, "summarize", filepath.Join(dir, "nodes", "node{node}", "dump"), "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sums1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(b), "\n")
	if !strings.Contains(head, `"node":{"index":1,"count":2,"launcher":"slurm"`) || !strings.Contains(head, filepath.Join("nodes", "node1", "dump")) {
		t.Errorf("header %.300s: want node 1 of 2 and the folder of node 1", head)
	}
}
