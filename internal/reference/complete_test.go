package reference

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// unreadSet is a verdict's unread rank-steps as "step:rank:reason", sorted.
func unreadSet(v *Verdict) []string {
	var out []string
	for _, u := range v.Unread {
		for _, r := range u.Ranks {
			out = append(out, fmt.Sprintf("%d:%d:%s", u.Step, r, u.Reason))
		}
	}
	slices.Sort(out)
	return out
}

func expectUnread(t *testing.T, v *Verdict, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := unreadSet(v); !slices.Equal(got, want) {
		t.Errorf("unread: got %v, want %v", got, want)
	}
	expect(t, "complete", v.Complete, len(want) == 0)
}

// What "clean" claims (README section 9).
func TestComplete(t *testing.T) {
	log := E("Torch.log.0.forward", fwd(in(ok), T(nan, nan)))
	clean := E("Torch.add.0.forward", fwd(in(ok, ok), ok))
	garbage := "not json at all"
	cleanRank := rankFiles{entries: []string{clean}}
	garbageRank := rankFiles{raw: &garbage}
	cut := dumpText(t, []string{clean, clean})
	cut = cut[:len(cut)*3/4]
	cutRank := rankFiles{raw: &cut}

	t.Run("every rank-step read whole is clean and complete", func(t *testing.T) {
		v := analyse(t, run{0: {0: cleanRank, 1: cleanRank}, 1: {0: cleanRank, 1: cleanRank}}, Options{})
		expectClean(t, v)
		expectUnread(t, v)
		expectStatuses(t, v, map[int]string{0: "clean", 1: "clean"})
	})
	t.Run("steps that could not be read are never clean", func(t *testing.T) {
		v := analyse(t, run{
			0: {0: cleanRank, 1: cleanRank},
			1: {0: garbageRank, 1: garbageRank},
			2: {0: garbageRank, 1: cleanRank},
		}, Options{})
		expectClean(t, v)
		expectUnread(t, v, "1:0:unreadable", "1:1:unreadable", "2:0:unreadable")
		expectStatuses(t, v, map[int]string{0: "clean", 1: "unread", 2: "incomplete"})
	})
	t.Run("a file cut after some entries is not read whole", func(t *testing.T) {
		v := analyse(t, run{0: {0: cleanRank, 1: cutRank}}, Options{})
		expectClean(t, v)
		expectUnread(t, v, "0:1:damaged")
		expectStatuses(t, v, map[int]string{0: "incomplete"})
	})
	t.Run("a rank without a folder at one step is unread there", func(t *testing.T) {
		v := analyse(t, run{0: {0: cleanRank, 1: cleanRank}, 1: {0: cleanRank}}, Options{})
		expectUnread(t, v, "1:1:no folder")
		expectInts(t, "not_dumped", v.NotDumped, nil)
		expectStatuses(t, v, map[int]string{0: "clean", 1: "incomplete"})
	})
	t.Run("a gap in the rank numbering is a rank not dumped, said but not unread", func(t *testing.T) {
		v := analyse(t, run{0: {0: cleanRank, 1: cleanRank, 3: cleanRank}}, Options{})
		expectClean(t, v)
		expectUnread(t, v)
		expectInts(t, "not_dumped", v.NotDumped, []int{2})
		expectStatuses(t, v, map[int]string{0: "clean"})
	})
	t.Run("a step folder holding no rank folder is unread", func(t *testing.T) {
		dir := run{0: {0: cleanRank, 1: cleanRank}, 2: {0: cleanRank, 1: cleanRank}}.write(t)
		if err := mkdir(filepath.Join(dir, "step1")); err != nil {
			t.Fatal(err)
		}
		v := analyseDir(t, dir, Options{})
		expectClean(t, v)
		expectUnread(t, v, "1:0:no folder", "1:1:no folder")
		expectStatuses(t, v, map[int]string{0: "clean", 1: "unread", 2: "clean"})
	})
	t.Run("a step folder that is a link leading nowhere is unread", func(t *testing.T) {
		dir := run{0: {0: cleanRank, 1: cleanRank}, 2: {0: cleanRank, 1: cleanRank}}.write(t)
		if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "step1")); err != nil {
			t.Fatal(err)
		}
		v := analyseDir(t, dir, Options{})
		expectClean(t, v)
		expectUnread(t, v, "1:0:step folder unreadable", "1:1:step folder unreadable")
		expectStatuses(t, v, map[int]string{0: "clean", 1: "unread", 2: "clean"})
	})
	t.Run("a rank folder that is a link leading nowhere is unread", func(t *testing.T) {
		dir := run{0: {0: cleanRank, 1: cleanRank}, 1: {0: cleanRank}}.write(t)
		if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "step1", "rank1")); err != nil {
			t.Fatal(err)
		}
		v := analyseDir(t, dir, Options{})
		expectUnread(t, v, "1:1:unreadable")
	})
	t.Run("a step without a folder of the ranks asked about is unread for them", func(t *testing.T) {
		v := analyse(t, run{0: {0: cleanRank, 1: cleanRank}, 1: {0: cleanRank}}, Options{Ranks: map[int]bool{1: true}})
		expectUnread(t, v, "1:1:no folder")
		expectStatuses(t, v, map[int]string{0: "clean", 1: "unread"})
	})
	t.Run("ranks left out by the ranks option are not filled in", func(t *testing.T) {
		v := analyse(t, run{0: {0: cleanRank, 1: cleanRank, 3: cleanRank}}, Options{Ranks: map[int]bool{0: true, 3: true}})
		expectUnread(t, v)
		expectInts(t, "not_dumped", v.NotDumped, nil)
	})
	t.Run("a rank no step holds may be the source: not a collective origin", func(t *testing.T) {
		recv := E("Distributed.all_reduce.0.forward", allReduce(ok, T(nan, nan), ""))
		v := analyse(t, run{0: {0: {entries: []string{recv}}, 1: {entries: []string{recv}}, 3: {entries: []string{recv}}}}, Options{})
		o := origin(t, v)
		expect(t, "origin.unread", o.Unread, true)
		expectInts(t, "origin.ranks", o.Ranks, []int{2})
		expect(t, "origin.collective", o.Collective, false)
		expectInts(t, "not_dumped", v.NotDumped, []int{2})
	})
	t.Run("an anomaly is found whatever else is unread", func(t *testing.T) {
		v := analyse(t, run{
			0: {0: garbageRank, 1: cleanRank},
			1: {0: {entries: []string{log}}, 1: cleanRank},
			2: {0: {entries: []string{log}}, 1: cleanRank},
		}, Options{})
		o := origin(t, v)
		expect(t, "origin.step", o.Step, 1)
		expect(t, "origin.confidence", o.Confidence, "medium") // step 0 rank 0 may hold an older one
		expectUnread(t, v, "0:0:unreadable")
		expectStatuses(t, v, map[int]string{0: "incomplete", 1: "anomaly", 2: "checked"})
	})
	t.Run("a next step not read whole cannot tell that the anomaly did not last", func(t *testing.T) {
		v := analyse(t, run{
			1: {0: {entries: []string{log}}, 1: cleanRank},
			2: {0: garbageRank, 1: cleanRank},
			3: {0: cleanRank, 1: cleanRank},
		}, Options{})
		o := origin(t, v)
		expect(t, "origin.step", o.Step, 1)
		expect(t, "origin.confidence", o.Confidence, "medium")
		expect(t, "scanned.checked_next", ptr(v.Scanned.CheckedNext), "2")
		expectInts(t, "scanned.steps", v.Scanned.Steps, []int{1})
		expectInts(t, "scanned.not_scanned", v.Scanned.NotScanned, []int{3})
		expectUnread(t, v, "2:0:unreadable")
		expectStatuses(t, v, map[int]string{1: "anomaly", 2: "incomplete", 3: "not_scanned"})
		if len(v.Recovered) != 0 {
			t.Errorf("recovered: got %+v, want none", v.Recovered)
		}
	})
	t.Run("a next step read whole and clean: it did not last", func(t *testing.T) {
		v := analyse(t, run{
			1: {0: {entries: []string{log}}, 1: cleanRank},
			2: {0: cleanRank, 1: cleanRank},
			3: {0: garbageRank, 1: cleanRank},
		}, Options{})
		expectClean(t, v)
		expectUnread(t, v, "3:0:unreadable")
		expectStatuses(t, v, map[int]string{1: "recovered", 2: "clean", 3: "incomplete"})
	})
}
