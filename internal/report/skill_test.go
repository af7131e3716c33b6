package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"
)

// The field names the nan-overflow-detection skill's scripts wrote, which
// --format skill keeps: cross_rank_analyzer.py's per collective,
// single_rank_tracer.py's result and first anomaly, and its input_info
// items.
var (
	skillCrossRankKeys    = []string{"source_ranks", "propagated_ranks", "normal_ranks", "total_ranks"}
	skillSingleRankKeys   = []string{"rank", "first_anomaly"}
	skillFirstAnomalyKeys = []string{"op_name", "exec_order", "output", "output_has_nan", "input_has_nan", "input_info", "construct_chain", "stack_info"}
	skillInputInfoKeys    = []string{"shape", "Max", "dtype"}
	skillTopKeys          = []string{"schema", "anomaly", "step", "confidence", "cross_rank_analysis", "single_rank_trace", "notes"}
)

// TestSkillGolden writes every testdata/markdown_NAME.json verdict (most of
// them traced from the real fixtures) in the skill's shapes and compares
// it with testdata/skill_NAME.json (go test -update rewrites them).
func TestSkillGolden(t *testing.T) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "markdown_*.json"))
	if len(inputs) < 5 {
		t.Fatalf("want at least 5 verdicts in testdata, found %d", len(inputs))
	}
	for _, in := range inputs {
		name := strings.TrimPrefix(strings.TrimSuffix(filepath.Base(in), ".json"), "markdown_")
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Skill(&b, readVerdict(t, in)); err != nil {
				t.Fatal(err)
			}
			CheckSkillFields(t, b.Bytes())
			golden := filepath.Join("testdata", "skill_"+name+".json")
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("output differs from %s (run go test -update after checking the change):\n--- got\n%s\n--- want\n%s", golden, b.String(), want)
			}
		})
	}
}

// CheckSkillFields fails t when the output lacks a field the skill's
// scripts wrote or renames one, or when the ranks of a collective do not
// add up.
func CheckSkillFields(t *testing.T, out []byte) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(out, &top); err != nil {
		t.Fatalf("not one JSON object: %v", err)
	}
	hasKeys(t, "the output", top, skillTopKeys)
	var cross map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top["cross_rank_analysis"], &cross); err != nil {
		t.Fatalf("cross_rank_analysis: %v", err)
	}
	for op, m := range cross {
		hasKeys(t, "cross_rank_analysis."+op, m, skillCrossRankKeys)
		var groups [4][]int
		for i, k := range []string{"source_ranks", "propagated_ranks", "normal_ranks", "unread_ranks"} {
			if err := json.Unmarshal(m[k], &groups[i]); err != nil || groups[i] == nil {
				t.Errorf("cross_rank_analysis.%s.%s = %s, want a list of ranks", op, k, m[k])
			}
		}
		var total int
		json.Unmarshal(m["total_ranks"], &total)
		all := slices.Concat(groups[:]...)
		slices.Sort(all)
		if len(slices.Compact(slices.Clone(all))) != len(all) || len(all) != total {
			t.Errorf("cross_rank_analysis.%s: ranks %v overlap or do not add up to total_ranks %d", op, groups, total)
		}
	}
	if string(top["single_rank_trace"]) == "null" {
		return
	}
	var single map[string]json.RawMessage
	if err := json.Unmarshal(top["single_rank_trace"], &single); err != nil {
		t.Fatalf("single_rank_trace: %v", err)
	}
	hasKeys(t, "single_rank_trace", single, skillSingleRankKeys)
	var first map[string]json.RawMessage
	if err := json.Unmarshal(single["first_anomaly"], &first); err != nil {
		t.Fatalf("first_anomaly: %v", err)
	}
	hasKeys(t, "first_anomaly", first, skillFirstAnomalyKeys)
	var inputs []map[string]json.RawMessage
	if err := json.Unmarshal(first["input_info"], &inputs); err != nil {
		t.Fatalf("input_info: %v", err)
	}
	for i, in := range inputs {
		hasKeys(t, "input_info item", in, skillInputInfoKeys)
		if i > 64 {
			break
		}
	}
	var outputs []map[string]json.RawMessage
	if err := json.Unmarshal(first["output"], &outputs); err != nil {
		t.Fatalf("output: %v", err)
	}
	for _, o := range outputs {
		hasKeys(t, "output item", o, []string{"Max", "Min"})
	}
	var stack []any
	if err := json.Unmarshal(first["stack_info"], &stack); err != nil {
		t.Fatalf("stack_info: %v", err)
	}
	if len(stack) != 0 {
		_, fn := stack[0].(string)
		_, file := stack[1].(string)
		_, line := stack[2].(float64)
		if len(stack) != 3 || !fn || !file || !line {
			t.Errorf("stack_info = %v, want [function, file, line]", stack)
		}
	}
	var chain []string
	var op string
	json.Unmarshal(first["op_name"], &op)
	if err := json.Unmarshal(first["construct_chain"], &chain); err != nil || len(chain) == 0 || chain[0] != op {
		t.Errorf("construct_chain = %s, want the op %q first", first["construct_chain"], op)
	}
}

func hasKeys(t *testing.T, what string, m map[string]json.RawMessage, keys []string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s lacks %q", what, k)
		}
	}
}

func TestSkillOf(t *testing.T) {
	steps := func(status string, anomalous ...verdict.RankState) []verdict.StepState {
		return []verdict.StepState{{Step: 4, Status: "clean", Ranks: "0-3"}, {Step: 5, Status: status, Ranks: "0-3", Anomalous: anomalous}}
	}
	scanned := verdict.Scanned{Ranks: []int{0, 1, 2, 3}}
	tests := []struct {
		name  string
		v     verdict.Verdict
		check func(t *testing.T, s SkillOutput)
	}{
		{"clean", verdict.Verdict{Scanned: scanned, Steps: steps("clean")}, func(t *testing.T, s SkillOutput) {
			if s.Anomaly || s.Step != nil || s.SingleRank != nil || len(s.CrossRank) != 0 || len(s.Notes) != 1 {
				t.Errorf("%+v", s)
			}
		}},
		{"collective origin", verdict.Verdict{Anomaly: true, Scanned: scanned,
			Origin: &verdict.Origin{Step: 5, Ranks: []int{0, 1, 2, 3}, Op: "Distributed.all_reduce.2.forward", Kind: "inf", Captured: true, Collective: true, Confidence: "high"},
			Steps: steps("anomaly", verdict.RankState{Rank: 1, Role: "source", Op: "Distributed.all_reduce.2.forward", Index: 40},
				verdict.RankState{Rank: 0, Role: "source", Op: "Distributed.all_reduce.2.forward", Index: 41})},
			func(t *testing.T, s SkillOutput) {
				if len(s.CrossRank) != 1 {
					t.Fatalf("cross rank %+v", s.CrossRank)
				}
				c := s.CrossRank[0]
				if c.Op != "Distributed.all_reduce.2.forward" || len(c.SourceRanks) != 0 || !slices.Equal(c.PropagatedRanks, []int{0, 1, 2, 3}) || c.TotalRanks != 4 {
					t.Errorf("collective origin as %+v", c)
				}
				// the lowest rank whose first sign is the origin's op, and its index there
				if s.SingleRank.Rank != 0 || *s.SingleRank.FirstAnomaly.ExecOrder != 41 {
					t.Errorf("single rank %+v", s.SingleRank)
				}
				if !strings.Contains(s.Notes[0], "the collective itself overflowed") {
					t.Errorf("notes %q", s.Notes)
				}
			}},
		{"unread origin, two groups under one name, a carrier in the next step", verdict.Verdict{Anomaly: true, Scanned: scanned,
			Origin: &verdict.Origin{Step: 5, Ranks: []int{3}, Op: "Distributed.all_reduce.0.forward", Kind: "nan", Unread: true, Confidence: "low", Reasons: []string{"only receivers were read"}},
			Spread: []verdict.Hop{
				{Step: 5, Op: "Distributed.all_reduce.0.forward", FromRanks: []int{}, ToRanks: []int{1}, Unread: []int{3}, Group: []int{1, 3}},
				{Step: 5, Op: "Distributed.all_reduce.0.forward", FromRanks: []int{1}, ToRanks: []int{0}, Group: []int{0, 1}},
				{Step: 6, Op: "Distributed.all_reduce.0.forward", FromRanks: []int{0}, ToRanks: []int{2}},
			},
			Carrier: &verdict.Hop{Step: 6, Op: "Distributed.all_reduce.0.forward", FromRanks: []int{0}, ToRanks: []int{2}},
			Steps: append(steps("anomaly", verdict.RankState{Rank: 1, Role: "received", Op: "Distributed.all_reduce.0.forward", Index: 9}),
				verdict.StepState{Step: 6, Status: "checked", Ranks: "0-3"})},
			func(t *testing.T, s SkillOutput) {
				if len(s.CrossRank) != 2 {
					t.Fatalf("cross rank %+v", s.CrossRank)
				}
				a, b := s.CrossRank[0], s.CrossRank[1]
				if a.Op != "Distributed.all_reduce.0.forward" || !slices.Equal(a.SourceRanks, []int{1}) || !slices.Equal(a.PropagatedRanks, []int{0}) ||
					!slices.Equal(a.UnreadRanks, []int{3}) || len(a.NormalRanks) != 0 || a.TotalRanks != 3 {
					t.Errorf("the two groups' calls merged as %+v", a)
				}
				if b.Op != "Distributed.all_reduce.0.forward (step 6)" || b.Step != 6 || !slices.Equal(b.NormalRanks, []int{1, 3}) || b.TotalRanks != 4 {
					t.Errorf("the next step's hop as %+v", b)
				}
				if s.SingleRank.Rank != 1 || s.SingleRank.FirstAnomaly.Captured {
					t.Errorf("single rank %+v", s.SingleRank)
				}
				joined := strings.Join(s.Notes, "\n")
				for _, w := range []string{"only ranks that received it were read: ranks 3 sent it", "is in step 6", "confidence low"} {
					if !strings.Contains(joined, w) {
						t.Errorf("notes lack %q:\n%s", w, joined)
					}
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, SkillOf(&tt.v))
			var b bytes.Buffer
			if err := Skill(&b, &tt.v); err != nil {
				t.Fatal(err)
			}
			CheckSkillFields(t, b.Bytes())
		})
	}
}
