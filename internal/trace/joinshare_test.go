package trace

import (
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
)

// A join holds a step's scans without their details (read again for the
// rank the verdict names) and with one copy of each process group, however
// many ranks' records name it: what keeps its memory flat in the ranks.
func TestJoinScansShare(t *testing.T) {
	realRun := filepath.Join(t.TempDir(), "dump")
	if err := copyDir(filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1"), realRun); err != nil {
		t.Fatal(err)
	}
	lazy, _ := joinScans(t, realRun)
	if lazy == 0 {
		t.Errorf("real msprobe run: no scan with details to read again")
	}
	// the real runs use the default process group: a tensor-parallel one
	// names its groups
	lazy, shared := joinScans(t, scenarioDir(t, "tp-clip-sgd"))
	if lazy == 0 || shared == 0 {
		t.Fatalf("tensor parallel: %d scans with details to read again, %d collectives sharing a group: want both > 0", lazy, shared)
	}
}

// joinScans makes the scans of every step of a run from its summary, and
// counts the scans whose details are read on demand and the collectives
// whose group another rank's scan holds too.
func joinScans(t *testing.T, dir string) (lazy, shared int) {
	t.Helper()
	files := summariseNodes(t, []string{dir}, false)
	rs, err := loadSummaries(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.close()
	_, byStep := groupBy(rs.dirs, func(d *dump.RankDir) int { return d.Step })
	for step, dirs := range byStep {
		scans, err := rs.scans(dirs, scanAll)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		firstOf := map[string]*int{}
		for rank, s := range scans {
			if s.det != nil {
				t.Errorf("step %d rank %d: the scan holds its details", step, rank)
			}
			if s.loadDet != nil {
				lazy++
				if d := s.loadDet(); d == nil || len(d.Warnings) > 0 && d.Stacks == nil {
					t.Errorf("step %d rank %d: details read again: %+v", step, rank, d)
				}
			}
			for _, c := range s.colls {
				if len(c.group) == 0 || c.groupKey == "" {
					continue
				}
				if p, ok := firstOf[c.groupKey]; !ok {
					firstOf[c.groupKey] = &c.group[0]
				} else if p == &c.group[0] {
					shared++
				} else {
					t.Errorf("step %d rank %d: group %s is a copy of its own", step, rank, c.groupKey)
				}
			}
		}
	}
	return lazy, shared
}
