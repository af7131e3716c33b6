package reference

import (
	"os"
	"slices"
	"strconv"
	"testing"
)

func mkdir(p string) error { return os.MkdirAll(p, 0o755) }

func statuses(v *Verdict) map[int]string {
	m := map[int]string{}
	for _, s := range v.Steps {
		m[s.Step] = s.Status
	}
	return m
}

func expectStatuses(t *testing.T, v *Verdict, want map[int]string) {
	t.Helper()
	got := statuses(v)
	for step, st := range want {
		if got[step] != st {
			t.Errorf("steps[%d].status: got %q, want %q", step, got[step], st)
		}
	}
	if len(got) != len(want) {
		t.Errorf("steps: got %v, want %v", got, want)
	}
}

func ptr(p *int) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(*p)
}

// Across steps (README section 7).
func TestAcrossSteps(t *testing.T) {
	log := E("Torch.log.0.forward", fwd(in(ok), T(nan, nan)))
	exp := E("Torch.exp.0.forward", fwd(in(ok), T(pinf, fin)))
	clean := E("Torch.add.0.forward", fwd(in(ok, ok), ok))

	t.Run("did not last, with a gap between dumped steps", func(t *testing.T) {
		r := run{
			2: {0: {entries: []string{log}}, 1: {entries: []string{clean}}},
			5: {0: {entries: []string{clean}}, 1: {entries: []string{clean}}},
			9: {0: {entries: []string{exp}}, 1: {entries: []string{clean}}},
		}
		v := analyse(t, r, Options{})
		o := origin(t, v)
		expect(t, "origin.step", o.Step, 9)
		expect(t, "origin.op", o.Op, "Torch.exp.0.forward")
		if len(v.Recovered) != 1 {
			t.Fatalf("recovered: got %+v, want step 2", v.Recovered)
		}
		rec := v.Recovered[0]
		expect(t, "recovered.step", rec.Step, 2)
		expect(t, "recovered.next_step", rec.NextStep, 5)
		expect(t, "recovered.op", rec.Op, "Torch.log.0.forward")
		expect(t, "recovered.kind", rec.Kind, "nan")
		expect(t, "recovered.stage", rec.Stage, "forward")
		expectInts(t, "recovered.ranks", rec.Ranks, []int{0})
		expectStatuses(t, v, map[int]string{2: "recovered", 5: "clean", 9: "anomaly"})
		expectInts(t, "scanned.steps", v.Scanned.Steps, []int{2, 5, 9})
		expect(t, "scanned.stopped_at", ptr(v.Scanned.StoppedAt), "9")
		expect(t, "scanned.checked_next", ptr(v.Scanned.CheckedNext), "null")
		expectInts(t, "scanned.not_scanned", v.Scanned.NotScanned, []int{})
		if rows := v.Steps[0].Anomalous; len(rows) != 1 || rows[0].Role != "source" {
			t.Errorf("steps[2].anomalous: got %+v, want rank 0 source", rows)
		}
	})
	t.Run("strict stops at the first anomalous step", func(t *testing.T) {
		r := run{
			2: {0: {entries: []string{log}}},
			5: {0: {entries: []string{clean}}},
		}
		v := analyse(t, r, Options{Strict: true})
		expect(t, "origin.step", origin(t, v).Step, 2)
		expect(t, "recovered", len(v.Recovered), 0)
		expectStatuses(t, v, map[int]string{2: "anomaly", 5: "not_scanned"})
		expectInts(t, "scanned.steps", v.Scanned.Steps, []int{2})
		expectInts(t, "scanned.not_scanned", v.Scanned.NotScanned, []int{5})
		expect(t, "scanned.checked_next", ptr(v.Scanned.CheckedNext), "null")
	})
	t.Run("a lasting anomaly: the next dumped step is checked", func(t *testing.T) {
		r := run{
			0: {0: {entries: []string{clean}}},
			1: {0: {entries: []string{log}}},
			2: {0: {entries: []string{log}}},
			3: {0: {entries: []string{log}}},
		}
		v := analyse(t, r, Options{})
		expect(t, "origin.step", origin(t, v).Step, 1)
		expectStatuses(t, v, map[int]string{0: "clean", 1: "anomaly", 2: "checked", 3: "not_scanned"})
		expectInts(t, "scanned.steps", v.Scanned.Steps, []int{0, 1})
		expect(t, "scanned.checked_next", ptr(v.Scanned.CheckedNext), "2")
		expectInts(t, "scanned.not_scanned", v.Scanned.NotScanned, []int{3})
		for _, s := range v.Steps {
			if s.Status == "checked" && len(s.Anomalous) != 0 {
				t.Errorf("a checked step lists no rows: %+v", s.Anomalous)
			}
		}
	})
	t.Run("first NaN and carrier found in the next dumped step", func(t *testing.T) {
		ar := func(before, after string) string {
			return E("Distributed.all_reduce.0.forward", allReduce(before, after, ""))
		}
		r := run{
			0: {0: {entries: []string{exp, ar(ok, ok)}}, 1: {entries: []string{ar(ok, ok)}}},
			4: {0: {entries: []string{E("Torch.div.0.forward", fwd(in(T(pinf, fin), ok), T(nan, nan))), ar(T(nan, nan), T(nan, nan))}},
				1: {entries: []string{ar(ok, T(nan, nan))}}},
		}
		v := analyse(t, r, Options{})
		o := origin(t, v)
		expect(t, "origin.step", o.Step, 0)
		expect(t, "origin.kind", o.Kind, "inf")
		if v.FirstNaN == nil {
			t.Fatal("first_nan: got none")
		}
		expect(t, "first_nan", *v.FirstNaN, OpRef{Step: 4, Rank: 0, Op: "Torch.div.0.forward"})
		want := Hop{Step: 4, Op: "Distributed.all_reduce.0.forward", FromRanks: []int{0}, ToRanks: []int{1}}
		expectHop(t, "carrier", v.Carrier, want)
		if !slices.ContainsFunc(v.Spread, func(h Hop) bool { return hopEqual(h, want) }) {
			t.Errorf("spread: got %+v, want it to hold the carrier", v.Spread)
		}
		expect(t, "scanned.checked_next", ptr(v.Scanned.CheckedNext), "4")
	})
	t.Run("steps and ranks options", func(t *testing.T) {
		r := run{
			0: {0: {entries: []string{log}}, 1: {entries: []string{clean}}},
			1: {0: {entries: []string{clean}}, 1: {entries: []string{exp}}},
		}
		v := analyse(t, r, Options{Steps: map[int]bool{1: true}, Ranks: map[int]bool{1: true}})
		o := origin(t, v)
		expect(t, "origin.step", o.Step, 1)
		expectInts(t, "origin.ranks", o.Ranks, []int{1})
		expectStatuses(t, v, map[int]string{1: "anomaly"})
	})
}

// Layouts: a step folder, a rank folder and a dump.json are read as one
// step; a lone proc folder is rank 0.
func TestLayouts(t *testing.T) {
	r := run{3: {0: {entries: []string{E("Torch.log.0.forward", fwd(in(ok), T(nan, nan)))}}}}
	dir := r.write(t)
	for _, p := range []string{dir, dir + "/step3", dir + "/step3/rank0", dir + "/step3/rank0/dump.json"} {
		v, err := Analyse(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		o := origin(t, v)
		expect(t, p+": origin.step", o.Step, 3)
		expectInts(t, p+": origin.ranks", o.Ranks, []int{0})
	}
	if err := os.Rename(dir+"/step3/rank0", dir+"/step3/proc2016"); err != nil {
		t.Fatal(err)
	}
	v, err := Analyse(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	expectInts(t, "proc folder: origin.ranks", origin(t, v).Ranks, []int{0})
	if _, err := Analyse(t.TempDir(), Options{}); err == nil {
		t.Error("an empty folder: want an error")
	}
}
