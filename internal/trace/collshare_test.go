package trace

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// sharedWhere checks that the kept collectives of one step's scans that
// are the same instance on their ranks (same key, api, base and group)
// point at one collWhere, and counts those that do.
func sharedWhere(t *testing.T, step int, scans map[int]*rankScan) int {
	t.Helper()
	type same struct{ api, key, base, groupKey string }
	first := map[same]*collWhere{}
	shared := 0
	for rank, s := range scans {
		for _, c := range s.colls {
			k := same{c.api, c.key, c.base, c.groupKey}
			had, ok := first[k]
			switch {
			case !ok:
				first[k] = c.collWhere
			case had == c.collWhere:
				shared++
			case slices.Equal(had.group, c.group) && (had.group == nil) == (c.group == nil):
				t.Errorf("step %d rank %d: collective %s has a copy of its own", step, rank, c.key)
			}
		}
	}
	return shared
}

// The ranks of a step share what their collectives have in common, in a
// trace of the files and in a join of their summaries: on the real msprobe
// run (the NaN goes through all_reduce to every rank) and on a
// tensor-parallel one.
func TestCollectivesShareWhatRanksHaveInCommon(t *testing.T) {
	pol, err := policy.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{
		filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1"),
		scenarioDir(t, "tp-clip-sgd"),
	} {
		layout, err := dump.Discover(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, byStep := groupBy(layout.Dirs, func(d *dump.RankDir) int { return d.Step })
		files := 0
		a := &analysis{ctx: context.Background(), pol: pol, jobs: 2}
		for step, dirs := range byStep {
			scans, err := a.scanStep(dirs, scanAll, nil)
			if err != nil {
				t.Fatal(err)
			}
			files += sharedWhere(t, step, scans)
		}
		a.ahead.stop()

		joined := 0
		rs, err := loadSummaries(summariseNodes(t, []string{dir}, false), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, byStep = groupBy(rs.dirs, func(d *dump.RankDir) int { return d.Step })
		for step, dirs := range byStep {
			scans, err := rs.scans(dirs, scanAll)
			if err != nil {
				t.Fatal(err)
			}
			joined += sharedWhere(t, step, scans)
		}
		rs.close()
		if files == 0 || joined == 0 {
			t.Errorf("%s: %d collectives shared in the trace of the files, %d in the join: want both > 0", dir, files, joined)
		}
	}
}
