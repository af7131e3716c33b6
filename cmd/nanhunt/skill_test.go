package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/verdict"
)

// --format skill: the shapes the nan-overflow-detection skill's scripts
// wrote, with the field names they used (cross_rank_analyzer.py's per
// collective, single_rank_tracer.py's result and first anomaly).

type skillOut struct {
	Anomaly    bool                                  `json:"anomaly"`
	Step       *int                                  `json:"step"`
	CrossRank  map[string]map[string]json.RawMessage `json:"cross_rank_analysis"`
	SingleRank *struct {
		Rank         *int                       `json:"rank"`
		FirstAnomaly map[string]json.RawMessage `json:"first_anomaly"`
	} `json:"single_rank_trace"`
	Notes []string `json:"notes"`
}

var (
	crossRankFields    = []string{"source_ranks", "propagated_ranks", "normal_ranks", "total_ranks"}
	firstAnomalyFields = []string{"op_name", "exec_order", "output", "output_has_nan", "input_has_nan", "input_info", "construct_chain", "stack_info"}
)

// traceSkill runs trace --format skill on dir, checks the scripts' field
// names, and returns the output with the JSON verdict of the same dump.
func traceSkill(t *testing.T, dir string) (string, skillOut, verdict.Verdict) {
	t.Helper()
	out, errOut, code := runCLI(t, "trace", "--format", "skill", dir)
	if code != exitAnomaly || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var s skillOut
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	for op, m := range s.CrossRank {
		for _, k := range crossRankFields {
			if _, ok := m[k]; !ok {
				t.Errorf("cross_rank_analysis.%s lacks %q", op, k)
			}
		}
	}
	if s.SingleRank == nil || s.SingleRank.Rank == nil {
		t.Fatalf("no single_rank_trace.rank in %s", out)
	}
	for _, k := range firstAnomalyFields {
		if _, ok := s.SingleRank.FirstAnomaly[k]; !ok {
			t.Errorf("first_anomaly lacks %q", k)
		}
	}
	js, _, _ := runCLI(t, "trace", "--format", "json", dir)
	var v verdict.Verdict
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	return out, s, v
}

func ranksOf(t *testing.T, m map[string]json.RawMessage, key string) []int {
	t.Helper()
	var r []int
	if err := json.Unmarshal(m[key], &r); err != nil || r == nil {
		t.Errorf("%s = %s, want a list of ranks", key, m[key])
	}
	return r
}

// TestTraceSkillRealRuns: on every real run, the skill's single-rank
// result names the true origin op, step and a true source rank, and its
// cross-rank result has every collective that spread it with its senders.
func TestTraceSkillRealRuns(t *testing.T) {
	for _, name := range realruns.Scenarios() {
		t.Run(name, func(t *testing.T) {
			tf := realruns.Truth(t, name)
			truth := tf.Truth
			if !truth.Anomaly {
				// a clean run: exit 0, no anomaly, nothing to trace
				out, errOut, code := runCLI(t, "trace", "--format", "skill", filepath.Join(realruns.Dir(t, name), tf.Levels[0]))
				var s skillOut
				if err := json.Unmarshal([]byte(out), &s); err != nil || code != 0 || errOut != "" || s.Anomaly {
					t.Errorf("clean run: exit %d, anomaly %v, stderr %q, %v", code, s.Anomaly, errOut, err)
				}
				return
			}
			_, s, v := traceSkill(t, filepath.Join(realruns.Dir(t, name), tf.Levels[0]))
			var op string
			var captured bool
			fa := s.SingleRank.FirstAnomaly
			json.Unmarshal(fa["op_name"], &op)
			json.Unmarshal(fa["captured"], &captured)
			if !s.Anomaly || s.Step == nil || *s.Step != truth.Step || op != truth.Op || !slices.Contains(truth.Ranks, *s.SingleRank.Rank) || captured != truth.Captured {
				t.Errorf("step %v, rank %d, op %s, captured %v; the truth is step %d, ranks %v, %s, captured %v",
					s.Step, *s.SingleRank.Rank, op, captured, truth.Step, truth.Ranks, truth.Op, truth.Captured)
			}
			for _, h := range v.Spread {
				key := h.Op
				if h.Step != v.Origin.Step {
					key += " (step " + strconv.Itoa(h.Step) + ")"
				}
				m, ok := s.CrossRank[key]
				if !ok {
					t.Errorf("cross_rank_analysis lacks %s (%+v)", key, h)
					continue
				}
				src, prop := ranksOf(t, m, "source_ranks"), ranksOf(t, m, "propagated_ranks")
				for _, r := range h.FromRanks {
					if !slices.Contains(src, r) {
						t.Errorf("%s: sender %d not in source_ranks %v", key, r, src)
					}
				}
				for _, r := range h.ToRanks {
					if !slices.Contains(prop, r) && !slices.Contains(src, r) {
						t.Errorf("%s: receiver %d not in propagated_ranks %v", key, r, prop)
					}
				}
			}
			if len(v.Spread) > 0 && len(s.CrossRank) == 0 {
				t.Errorf("the verdict has %d hops, the cross-rank result none", len(v.Spread))
			}
		})
	}
}

// TestTraceSkillGolden: the real fixture of the README, a real run where
// a float16 all_reduce overflowed in two groups at once, and the run
// written in the format the skill documents.
func TestTraceSkillGolden(t *testing.T) {
	tests := []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"skill-bwd-sqrt-zero-L1.json", func(t *testing.T) string {
			return filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
		}},
		{"skill-realrun-tie-two-groups.json", func(t *testing.T) string {
			return filepath.Join(realruns.Dir(t, "fp16-allreduce-two-groups"), "L1")
		}},
		{"skill-format-dump.json", func(t *testing.T) string {
			return filepath.Join("..", "..", "internal", "trace", "testdata", "skill-format")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, _ := traceSkill(t, tt.dir(t))
			golden(t, tt.name, out)
		})
	}
}

// TestTraceSkillFormatDump traces the run written as the skill documents
// it (trace/testdata/make_skill_format.py) into the skill's own shapes.
func TestTraceSkillFormatDump(t *testing.T) {
	dir := filepath.Join("..", "..", "internal", "trace", "testdata", "skill-format")
	_, s, v := traceSkill(t, dir)
	fa := s.SingleRank.FirstAnomaly
	var op string
	var order int
	var stack []any
	json.Unmarshal(fa["op_name"], &op)
	json.Unmarshal(fa["exec_order"], &order)
	json.Unmarshal(fa["stack_info"], &stack)
	if *s.SingleRank.Rank != 1 || op != "Torch.ops.aten.log_0_0" || order != 2 || len(stack) != 3 || stack[0] != "forward" || stack[1] != "model.py" || stack[2] != 24.0 {
		t.Errorf("rank %d, op %s at %d, stack %v; want rank 1's Torch.ops.aten.log_0_0 at 2, [forward model.py 24]", *s.SingleRank.Rank, op, order, stack)
	}
	m, ok := s.CrossRank["Distributed.all_reduce_0_0"]
	if !ok {
		t.Fatalf("cross_rank_analysis lacks Distributed.all_reduce_0_0: %v", s.CrossRank)
	}
	if src, prop := ranksOf(t, m, "source_ranks"), ranksOf(t, m, "propagated_ranks"); !slices.Equal(src, []int{1}) || !slices.Equal(prop, []int{0, 2, 3}) {
		t.Errorf("source %v, propagated %v; want 1 and 0,2,3", src, prop)
	}
	warned := 0
	for _, w := range v.Warnings {
		if filepath.Base(w.File) == "dump.json" && strings.HasPrefix(w.Message, "written in the format the nan-overflow-detection skill documents") {
			warned++
		}
	}
	if warned != 4 {
		t.Errorf("%d dump.json warnings about the format, want one for each of the 4 files read", warned)
	}
}

// TestSkillDoc holds skills/nan-overflow-detection/SKILL.md to what skill
// loaders accept and to what nanhunt writes: YAML front matter with a
// name (the folder's) and a description, without the "---" msAgent's
// loader splits on; under 200 lines; its --format skill example a part of
// the golden output; every verdict field it names a field of the schema;
// every field of the earlier scripts named.
func TestSkillDoc(t *testing.T) {
	path := filepath.Join("..", "..", "skills", "nan-overflow-detection", "SKILL.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if n := strings.Count(doc, "\n"); n >= 200 {
		t.Errorf("SKILL.md has %d lines, want under 200", n)
	}
	front, body, ok := strings.Cut(strings.TrimPrefix(doc, "---\n"), "\n---\n")
	if !strings.HasPrefix(doc, "---\n") || !ok || strings.Contains(front, "---") {
		t.Fatalf("SKILL.md does not start with front matter between two --- lines")
	}
	fm := frontMatter(front)
	if len(fm) != 2 || fm["name"] != "nan-overflow-detection" || !regexp.MustCompile(`^[a-z0-9-]+$`).MatchString(fm["name"]) {
		t.Errorf("front matter %q: want only name nan-overflow-detection and description", fm)
	}
	if d := fm["description"]; d == "" || len(d) > 1024 || !strings.Contains(d, "Use it when") {
		t.Errorf("description %q: want what it does and when to use it, at most 1024 bytes", d)
	}

	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(body, -1)
	if len(blocks) != 1 {
		t.Fatalf("SKILL.md has %d JSON examples, want 1", len(blocks))
	}
	want, err := os.ReadFile(filepath.Join("testdata", "skill-bwd-sqrt-zero-L1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sub, full any
	if err := json.Unmarshal([]byte(blocks[0][1]), &sub); err != nil {
		t.Fatalf("the example is not JSON: %v", err)
	}
	json.Unmarshal(want, &full)
	if err := subset(sub, full, ""); err != nil {
		t.Errorf("the example is not what --format skill writes for bwd-sqrt-zero L1: %v", err)
	}

	fields := regexp.MustCompile("`((?:origin|carrier|first_nan|spread|candidates|steps|recovered|suppressed|warnings|plan|next_steps|anomaly)(?:\\[\\])?(?:\\.[a-z_]+(?:\\[\\])?)*)`")
	named := 0
	for _, m := range fields.FindAllStringSubmatch(body, -1) {
		named++
		if !verdictHas(reflect.TypeOf(verdict.Verdict{}), strings.Split(strings.ReplaceAll(m[1], "[]", ""), ".")) {
			t.Errorf("SKILL.md names %s, which the verdict does not have", m[1])
		}
	}
	if named < 20 {
		t.Errorf("SKILL.md names %d verdict fields, want the table of them", named)
	}
	for _, k := range append(append([]string{"cross_rank_analysis", "single_rank_trace", "rank"}, crossRankFields...), firstAnomalyFields...) {
		if !strings.Contains(body, "`"+k+"`") {
			t.Errorf("SKILL.md does not explain %s", k)
		}
	}
}

// frontMatter reads "key: value" lines, a folded ">-" value over the
// indented lines below it.
func frontMatter(s string) map[string]string {
	m := map[string]string{}
	key := ""
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, " ") && key != "" {
			m[key] = strings.TrimSpace(m[key] + " " + strings.TrimSpace(line))
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		key = strings.TrimSpace(k)
		if v = strings.TrimSpace(v); v != ">-" {
			m[key] = v
		} else {
			m[key] = ""
		}
	}
	return m
}

// verdictHas reports whether the JSON path names a field of t.
func verdictHas(t reflect.Type, path []string) bool {
	for _, name := range path {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		found := false
		for i := range t.NumField() {
			f := t.Field(i)
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
				t, found = f.Type, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
