package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/internal/linktest"
)

// A dump whose step folder is a link to another disk, and in it the rank
// folder a relative link to a third: no command writes into a folder a
// link leads to, whether the output is named through the link, by where it
// leads, or through a link of its own; and then nothing under the run
// changed.
func TestOutputGuardLinks(t *testing.T) {
	r := newGuardRun(t)
	in := func(s string) string { return filepath.Join(r.root, filepath.FromSlash(s)) }
	step := filepath.Join(r.dump, "step3")
	linktest.Move(t, step, in("disk2/step3"), in("disk2/step3"))
	linktest.Move(t, in("disk2/step3/rank1"), in("nvme1/rank1"), filepath.Join("..", "..", "nvme1", "rank1"))
	if err := os.Symlink(in("disk2/step3"), in("reports")); err != nil {
		t.Fatal(err)
	}
	stepLink := "step3 is a link to "
	rankLink := "rank1 is a link to "
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"trace --html a dump.json through the linked step", []string{"trace", r.dump, "--html", filepath.Join(r.rank, "dump.json")}, rankLink},
		{"trace -o a new file in the linked step", []string{"trace", r.dump, "-o", filepath.Join(step, "v.json")}, stepLink},
		{"trace -o through a folder that links into the step", []string{"trace", r.dump, "-o", in("reports/v.json")}, stepLink},
		{"trace the linked step, -o in the dump_path above it", []string{"trace", step, "-o", filepath.Join(r.dump, "v.json")}, "inside the dump"},
		{"report --markdown in the linked rank", []string{"report", r.verdict, "--dump", r.dump, "--markdown", filepath.Join(r.rank, "r.md")}, rankLink},
		{"plan -o where the step link leads", []string{"plan", r.dump, "-o", in("disk2/step3/config.json")}, "inside the dump"},
		{"repro -o in the linked rank", []string{"repro", r.dump, "--op", "Torch.sqrt.0", "--step", "3", "--rank", "1", "-o", filepath.Join(r.rank, "case")}, rankLink},
		{"export -o where the rank link leads", []string{"export", r.dump, "-o", in("nvme1/rank1/out")}, "inside the dump"},
		{"summarize -o in the linked step", []string{"summarize", r.dump, "-o", filepath.Join(step, "sums")}, stepLink},
		{"watch -o in the linked step", []string{"watch", r.dump, "-o", filepath.Join(step, "alarms")}, stepLink},
		{"watch --state where the rank link leads", []string{"watch", r.dump, "--state", in("nvme1/rank1/state.json")}, "inside the dump"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refused(t, r.root, tt.args, tt.msg) })
	}
}
