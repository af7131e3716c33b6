package trainlog

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestParsePattern(t *testing.T) {
	for _, tc := range []struct {
		in, name, expr, err string
	}{
		{`step=iteration (\d+)`, "step", `iteration (\d+)`, ""},
		{`loss=local_loss`, "loss", "local_loss", ""},
		{`grad_norm=grad norm: (\S+)`, "grad_norm", `grad norm: (\S+)`, ""},
		{`grad-norm=gn=(\S+)`, "grad_norm", `gn=(\S+)`, ""},
		{`Iteration=it (\d+)`, "step", `it (\d+)`, ""},
		{`GradNorm=x`, "grad_norm", "x", ""},
		{`loss`, "", "", "want name=expr"},
		{`lr=(\d+)`, "", "", "unknown name"},
		{`loss=(`, "", "", "bad loss pattern"},
		{`loss=(a)(b)`, "", "", "2 capture groups"},
		{`step=`, "", "", "empty step pattern"},
	} {
		name, expr, err := ParsePattern(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParsePattern(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || name != tc.name || expr != tc.expr {
			t.Errorf("ParsePattern(%q) = %q, %q, %v; want %q, %q", tc.in, name, expr, err, tc.name, tc.expr)
		}
	}
	var p Patterns
	if err := p.Set("grad", `gn (\S+)`); err != nil || p.GradNorm != `gn (\S+)` {
		t.Errorf("Set: %v %+v", err, p)
	}
	if err := p.Set("lr", "x"); err == nil {
		t.Error("Set accepted an unknown name")
	}
}

// TestGenericText reads a home-made log through user patterns: the step
// and the loss on one line, the grad norm on the next.
func TestGenericText(t *testing.T) {
	log := "epoch 0 starting\n" +
		"it 0 | loss=2.50\n  gn: 1.0\n" +
		"it 1 | loss=2.40\n  gn: inf\n" +
		"it 2 | loss=nan\n  gn: nan\n" +
		"some other line\n"
	pats := Patterns{Step: `it (\d+)`, Loss: `loss=(\S+)`, GradNorm: `gn:`}
	l := mustRead(t, writeFiles(t, "mine-rank2.txt", log), Options{Patterns: pats})
	s := l.Summary()
	if l.Files[0].Format != FormatGeneric || l.Files[0].Rank != 2 || l.Mapping.Offset != 0 {
		t.Fatalf("file %+v", l.Files[0])
	}
	if len(l.Records) != 3 || l.Records[1].Loss.Kind != Finite || l.Records[1].GradNorm.Kind != PosInf {
		t.Fatalf("records %+v", l.Records)
	}
	if f := s.FirstNonFinite; f == nil || f.Iteration != 1 || f.Step != 1 || f.Metric != "grad_norm" || f.Kind != "inf" ||
		!slices.Equal(f.Ranks, []int{2}) || f.Line != 4 {
		t.Errorf("first = %+v", f)
	}
	if s.StageHint != StageBackward {
		t.Errorf("hint %q: %s", s.StageHint, s.StageReason)
	}
}

// TestGenericNoStepPattern numbers value lines, and warns about values
// before any step when a step pattern is given.
func TestGenericNoStepPattern(t *testing.T) {
	l := mustRead(t, writeFiles(t, "a.txt", "loss 1\nloss 2\nloss NaN\n"), Options{Patterns: Patterns{Loss: `loss (\S+)`}})
	if f := l.Summary().FirstNonFinite; f == nil || f.Iteration != 2 || !l.Records[2].Inferred {
		t.Errorf("first = %+v", f)
	}
	l = mustRead(t, writeFiles(t, "b.txt", "loss 1\nstep 4\nloss nan\n"), Options{Patterns: Patterns{Step: `step (\d+)`, Loss: `loss (\S+)`}})
	if f := l.Summary().FirstNonFinite; f == nil || f.Iteration != 4 {
		t.Errorf("first = %+v", f)
	}
	if len(l.Warnings) != 1 || l.Warnings[0].Line != 1 || !strings.Contains(l.Warnings[0].Message, "before any line matching the step pattern") {
		t.Errorf("warnings %v", l.Warnings)
	}
}

// TestFormatOption: a named format recognises only its own lines.
func TestFormatOption(t *testing.T) {
	log := megLineText(1, "nan", "1.0", 0, 0) + "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2, reducing to 1\n"
	paths := writeFiles(t, "x.log", log)
	if l := mustRead(t, paths, Options{Format: "deepspeed"}); l.Files[0].Format != FormatDeepSpeed || l.Summary().FirstNonFinite != nil || l.Summary().SkippedTotal != 1 {
		t.Errorf("deepspeed: %+v %s", l.Files[0], jsonOf(t, l.Summary(), ""))
	}
	if l := mustRead(t, paths, Options{Format: "megatron"}); l.Files[0].Format != FormatMegatron || l.Summary().SkippedTotal != 0 {
		t.Errorf("megatron: %+v", l.Files[0])
	}
	if _, err := Read(context.Background(), paths, Options{Format: "generic"}); err == nil || !strings.Contains(err.Error(), "no training-log lines recognised") {
		t.Errorf("generic without patterns: %v", err)
	}
	if _, err := Read(context.Background(), paths, Options{Format: "csv"}); err == nil || !strings.Contains(err.Error(), `unknown format "csv"`) {
		t.Errorf("bad format: %v", err)
	}
	if _, err := Read(context.Background(), paths, Options{Patterns: Patterns{Loss: "("}}); err == nil || !strings.Contains(err.Error(), "bad loss pattern") {
		t.Errorf("bad pattern: %v", err)
	}
}
