package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/synth"
)

// scanSummary is what a checking read of one file decides, as text.
func scanSummary(s *rankScan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "stopped %v, err %v, damage %v, events", s.stopped, s.openErr, s.damage != nil)
	for _, ev := range s.events {
		fmt.Fprintf(&b, " %d:%s:%v:%v", ev.index, ev.name, ev.in, ev.out)
	}
	return b.String()
}

// A checking read searches a file only up to the window of its first
// suspect NaN or +Inf, and decides what a search of the whole file decides:
// on every rank of real runs and scenarios (the step after their fault is
// read that way).
func TestCheckingReadSearchesUpToItsFirstSuspect(t *testing.T) {
	roots, _ := filepath.Glob(filepath.Join(fixtures(t), "msprobe-generated", "*", "mix"))
	for _, name := range []string{"tp-clip-sgd", "forward-only", "loss-scale-recovered"} {
		roots = append(roots, scenarioDir(t, name))
	}
	// files of several windows, the step after the fault full of NaN
	spec, err := synth.Fit(synth.Spec{Name: "large", Ranks: 2, Steps: []int{0, 1, 2}, Model: synth.Dense,
		TargetFileBytes: 2 << 20, Fault: &synth.Fault{Kind: synth.ExpOverflow, Step: 1, Ranks: []int{1}}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	large := filepath.Join(t.TempDir(), "dump")
	if _, err := synth.Generate(spec, large); err != nil {
		t.Fatal(err)
	}
	roots = append(roots, large)
	sc := newScanner(policy.Default(), nil)
	before := partialSearches.Load()
	files := 0
	for _, root := range roots {
		l, err := dump.Discover(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, rd := range l.Dirs {
			files++
			got := scanSummary(sc.scanRank(context.Background(), rd, scanUntilSevere))
			sc.searchWhole = true
			want := scanSummary(sc.scanRank(context.Background(), rd, scanUntilSevere))
			sc.searchWhole = false
			if got != want {
				t.Fatalf("%s: searched up to its first suspect:\n %s\nsearched whole:\n %s", rd.Dump, got, want)
			}
		}
	}
	if partialSearches.Load() == before {
		t.Fatalf("no search of %d files stopped at its first suspect", files)
	}
}

// When the first suspect is no anomaly (a huge but finite number), the
// walk passes the bytes searched and the file is read again, its search
// made whole: the NaN later in it is found.
func TestCheckingReadPastAFalseSuspect(t *testing.T) {
	rd := falseSuspectRun(t)
	sc := newScanner(policy.Default(), nil)
	rescans := partialRescans.Load()
	s := sc.scanRank(context.Background(), rd, scanUntilSevere)
	if !s.stopped || len(s.events) == 0 || s.events[len(s.events)-1].name != "Torch.log.0.forward" {
		t.Fatalf("the NaN after the false suspect was not found: %s", scanSummary(s))
	}
	if partialRescans.Load() == rescans {
		t.Fatal("the file was not read again")
	}
}

// falseSuspectRun writes a rank folder whose dump.json's first suspect is
// no anomaly (a huge but finite number) three windows before a NaN, and
// returns it.
func falseSuspectRun(t *testing.T) dump.RankDir {
	t.Helper()
	var b strings.Builder
	b.WriteString("{\n \"task\": \"statistics\",\n \"level\": \"L1\",\n \"data\": {\n")
	entry := func(name, max string) {
		fmt.Fprintf(&b, "  %q: {\n   \"input_args\": [\n    {\n     \"type\": \"float\",\n     \"value\": 1e300\n    }\n   ],\n"+
			"   \"output\": [\n    {\n     \"type\": \"torch.Tensor\",\n     \"dtype\": \"torch.float32\",\n     \"shape\": [\n      4\n     ],\n"+
			"     \"Max\": %s,\n     \"Min\": 0.0,\n     \"Mean\": 0.5,\n     \"Norm\": 1.0,\n     \"requires_grad\": false\n    }\n   ]\n  },\n", name, max)
	}
	for i := 0; b.Len() < 3*window; i++ {
		entry(fmt.Sprintf("Torch.mul.%d.forward", i), "1.0")
	}
	entry("Torch.log.0.forward", "NaN")
	entry("Torch.mul.999999.forward", "1.0")
	doc := strings.TrimSuffix(b.String(), ",\n") + "\n }\n}\n"
	dir := filepath.Join(t.TempDir(), "step1", "rank0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dump.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return dump.RankDir{Step: 1, Dir: dir, Dump: filepath.Join(dir, "dump.json")}
}

// A full read (scanAll) searches a file only up to the window of its first
// suspect NaN or +Inf, walks the rest once settled, and records what a
// search of the whole file records, field for field: on every rank of real
// runs and scenarios, and of files of several windows with NaN in their
// middle.
func TestFullReadSearchesUpToItsFirstSuspect(t *testing.T) {
	roots, _ := filepath.Glob(filepath.Join(fixtures(t), "msprobe-generated", "*", "mix"))
	for _, name := range []string{"tp-clip-sgd", "forward-only", "loss-scale-recovered"} {
		roots = append(roots, scenarioDir(t, name))
	}
	for i, mode := range []string{"all", "forward"} {
		spec, err := synth.Fit(synth.Spec{Name: "large", Ranks: 2, Steps: []int{0, 1, 2}, Model: synth.Dense, DataMode: mode,
			TargetFileBytes: 2 << 20, Fault: &synth.Fault{Kind: synth.ExpOverflow, Step: 1, Ranks: []int{1}}, Seed: int64(3 + i)})
		if err != nil {
			t.Fatal(err)
		}
		large := filepath.Join(t.TempDir(), "dump")
		if _, err := synth.Generate(spec, large); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, large)
	}
	sc := newScanner(policy.Default(), nil)
	before, rescans := partialSearches.Load(), partialRescans.Load()
	rel := func(p string) string { return p }
	false1 := falseSuspectRun(t)
	roots = append(roots, filepath.Dir(filepath.Dir(false1.Dir)))
	for _, root := range roots {
		l, err := dump.Discover(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, rd := range l.Dirs {
			got, err := json.Marshal(sc.scanRank(context.Background(), rd, scanAll).toRecord(rel))
			if err != nil {
				t.Fatal(err)
			}
			sc.searchWhole = true
			want, err := json.Marshal(sc.scanRank(context.Background(), rd, scanAll).toRecord(rel))
			sc.searchWhole = false
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("%s: searched up to its first suspect:\n %s\nsearched whole:\n %s", rd.Dump, got, want)
			}
		}
	}
	if partialSearches.Load() == before {
		t.Fatal("no full read stopped its search at its first suspect")
	}
	if partialRescans.Load() == rescans {
		t.Fatal("the file whose first suspect is no anomaly was not read again")
	}
	s := sc.scanRank(context.Background(), false1, scanAll)
	if len(s.events) == 0 || s.events[len(s.events)-1].name != "Torch.log.0.forward" {
		t.Fatalf("the NaN after the false suspect was not found: %s", scanSummary(s))
	}
}
