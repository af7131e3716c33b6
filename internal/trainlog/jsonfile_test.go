package trainlog

import (
	"bufio"
	"context"
	"slices"
	"strings"
	"testing"
)

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		name, head, format string
		want               int
	}{
		{"object doc", "{\n \"rank\": 0,\n", "auto", modeJSONDoc},
		{"array doc", "[\n {\"step\": 1}", "auto", modeJSONDoc},
		{"jsonl", "{\"step\": 1, \"loss\": NaN}\n{\"step\": 2}\n", "auto", modeJSONLines},
		{"one line doc", "  {\"step\": 1}", "auto", modeJSONLines},
		{"timestamp", "[2024-05-01 10:00:00] iteration 1/ 10 |", "auto", modeText},
		{"deepspeed timestamp", "[2023-07-24 13:21:32,378] [INFO] x", "auto", modeText},
		{"python dict", "{'loss': 2.3}", "auto", modeText},
		{"text", "hello", "auto", modeText},
		{"empty", "", "auto", modeText},
		{"broken object", "{\"a\": x}\n", "auto", modeJSONDoc},
		{"forced megatron", "{\"step\": 1}\n", "megatron", modeText},
		{"forced json", "hello", "json", modeJSONDoc},
	} {
		if got := sniff(bufio.NewReader(strings.NewReader(tc.head)), tc.format); got != tc.want {
			t.Errorf("%s: sniff = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestJSONLines(t *testing.T) {
	log := `{"rank": 1, "global_step": 0, "train_loss": 2.5, "grad_norm": 1.0}
{"rank": 1, "global_step": 1, "train_loss": 2.4, "grad_norm": Infinity}

{"rank": 0, "global_step": 1, "train_loss": 2.4, "grad_norm": 3}
not json at all
{"rank": 1, "global_step": 2, "train_loss": NaN, "grad_norm": -Infinity, "nan_params": ["a.b", 3, "c"]}
{"rank": 1, "global_step": 3, "train_loss": 1e999
`
	l := mustRead(t, writeFiles(t, "metrics.jsonl", log), Options{})
	s := l.Summary()
	if l.Files[0].Format != FormatJSON || !slices.Equal(l.Files[0].Ranks, []int{0, 1}) || l.Files[0].Records != 4 {
		t.Fatalf("file %+v", l.Files[0])
	}
	if f := s.FirstNonFinite; f == nil || f.Metric != "grad_norm" || f.Kind != "inf" || f.Step != 1 || !slices.Equal(f.Ranks, []int{1}) || f.Line != 2 {
		t.Errorf("first = %+v", f)
	}
	if p := s.FirstNonFiniteParams; p == nil || p.Step != 2 || !slices.Equal(p.Names, []string{"a.b", "c"}) {
		t.Errorf("params = %+v", p)
	}
	var lines []int
	for _, w := range l.Warnings {
		lines = append(lines, w.Line)
	}
	if !slices.Equal(lines, []int{5, 7}) {
		t.Errorf("warnings %v", l.Warnings)
	}
}

// TestJSONNested: records inside a document, the rank after the records,
// user key patterns, and keys that are not the loss.
func TestJSONNested(t *testing.T) {
	doc := `{"meta": {"world": 2},
 "log": [
  {"it": 1, "metrics": {"x": 1}, "loss_scale": 65536, "my_loss": 1.5, "gn": 2},
  {"it": 2, "loss_scale": 65536, "my_loss": 1.4, "gn": "nan"},
  {"it": 3, "loss_scale": 65536, "my_loss": "-inf", "gn": NaN}
 ],
 "rank": 5
}`
	l := mustRead(t, writeFiles(t, "run.json", doc), Options{Patterns: Patterns{Step: "it", GradNorm: "^g"}})
	s := l.Summary()
	if l.Files[0].Rank != 5 || l.Records[0].Rank != 5 || l.Records[0].Line != 3 {
		t.Fatalf("file %+v records %+v", l.Files[0], l.Records)
	}
	if l.Records[0].Loss.V != 1.5 {
		t.Errorf("loss key: %+v (loss_scale is not a loss)", l.Records[0])
	}
	if f := s.FirstNonFiniteGradNorm; f == nil || f.Step != 2 || f.Line != 4 {
		t.Errorf("grad = %+v", f)
	}
	if f := s.FirstNonFiniteLoss; f == nil || f.Step != 3 || f.Kind != "-inf" {
		t.Errorf("loss = %+v", f)
	}
}

// TestJSONBadSteps: a step that is not a whole number is skipped with one
// warning.
func TestJSONBadSteps(t *testing.T) {
	log := `[{"step": 1.5, "loss": 1}, {"step": -1, "loss": 1}, {"step": "x", "loss": 1}, {"step": 2, "loss": NaN}]`
	l := mustRead(t, writeFiles(t, "a.json", log), Options{})
	if l.Files[0].Records != 1 || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0].Message, "not a step number") {
		t.Errorf("records %d warnings %v", l.Files[0].Records, l.Warnings)
	}
}

// TestJSONRankMerge: records naming the file's rank and records naming
// none are one rank.
func TestJSONRankMerge(t *testing.T) {
	doc := `{"steps": [{"step": 0, "loss": 1, "rank": 1}, {"step": 1, "loss": 1}, {"step": 2, "loss": NaN, "rank": 1}, {"step": 3, "loss": 1}], "rank": 1}`
	l := mustRead(t, writeFiles(t, "x.json", doc), Options{})
	s := l.Summary()
	if len(s.PerRank) != 1 || s.PerRank[0].Rank != 1 || s.PerRank[0].First.Step != 2 || s.PerRank[0].LastFinite.Step != 1 {
		t.Errorf("per rank %s", jsonOf(t, s.PerRank, ""))
	}
}

// TestJSONNoStepKey: a JSON file without records is a warning naming the
// keys looked for.
func TestJSONNoStepKey(t *testing.T) {
	paths := writeFiles(t, "a.json", `{"epoch": 1, "loss": NaN}`, "b.json", `[{"step": 1, "loss": NaN}]`)
	l := mustRead(t, paths, Options{})
	if len(l.Warnings) != 1 || l.Warnings[0].String() != paths[0]+": no JSON object holds a step key (step, iteration, iter or global_step)" {
		t.Errorf("warnings %v", l.Warnings)
	}
	_, err := Read(context.Background(), paths[1:], Options{Patterns: Patterns{Step: "nope"}, Format: "json"})
	if err == nil || !strings.Contains(err.Error(), "no training-log lines recognised in "+paths[1]) {
		t.Errorf("err = %v", err)
	}
}
