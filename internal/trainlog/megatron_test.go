package trainlog

import (
	"slices"
	"strings"
	"testing"
)

func TestParseMegatronLine(t *testing.T) {
	for _, tc := range []struct {
		name, line       string
		ok               bool
		iter, total      int
		lossKey          string
		loss, grad       Kind
		skipped, nanIter int
	}{
		{"full", megLineText(9, "7.123456E+00", "nan", 0, 1), true, 9, 100, "lm loss", Finite, NaN, 0, 1},
		{"no grad norm", megLineText(3, "7.0E+00", "", 1, 0), true, 3, 100, "lm loss", Finite, Absent, 1, 0},
		{"no loss", megLineText(3, "", "1.5", 0, 0), true, 3, 100, "", Absent, Finite, 0, 0},
		{"plain loss key", " iteration 5/10 | loss: inf | grad norm: -inf |", true, 5, 10, "loss", PosInf, NegInf, -1, -1},
		{"lm loss wins", " iteration 5/10 | mtp_1 loss: 1.0 | lm loss: NAN | z_loss: 2 |", true, 5, 10, "lm loss", NaN, Absent, -1, -1},
		{"first loss key", " iteration 5/10 | loss scale: 1.0 | mtp loss: -nan | load_balancing_loss: 2 |", true, 5, 10, "mtp loss", NaN, Absent, -1, -1},
		{"tabs and no blanks", "iteration\t7 /8| grad norm:Infinity|", true, 7, 8, "", Absent, PosInf, -1, -1},
		{"validation line", " validation loss at iteration 100 | lm loss value: 2.3 |", false, 0, 0, "", Absent, Absent, 0, 0},
		{"checkpoint line", "saving checkpoint at iteration     100 to /ckpt", false, 0, 0, "", Absent, Absent, 0, 0},
		{"second place counts", "iterations 3/4 x iteration 5/6 | loss: 1 |", true, 5, 6, "loss", Finite, Absent, -1, -1},
		{"huge iteration", " iteration 99999999999999999999/100 | loss: 1 |", false, 0, 0, "", Absent, Absent, 0, 0},
		{"garbage value", " iteration 1/2 | lm loss: tensor(nan) | grad norm: 1,5 |", true, 1, 2, "lm loss", Absent, Absent, -1, -1},
		{"unreadable counter", " iteration 1/2 | number of skipped iterations: x | number of skipped iterations: 1 |", true, 1, 2, "", Absent, Absent, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := parseMegatronLine([]byte(tc.line))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if m.iter != tc.iter || m.total != tc.total || string(m.lossKey) != tc.lossKey ||
				m.loss.Kind != tc.loss || m.grad.Kind != tc.grad || m.skipped != tc.skipped || m.nanIters != tc.nanIter {
				t.Errorf("got iter %d/%d loss %q=%v grad %v skipped %d nan %d; want %d/%d %q=%v %v %d %d",
					m.iter, m.total, m.lossKey, m.loss.Kind, m.grad.Kind, m.skipped, m.nanIters,
					tc.iter, tc.total, tc.lossKey, tc.loss, tc.grad, tc.skipped, tc.nanIter)
			}
		})
	}
}

// TestMegatronSpellings checks that every spelling of a non-finite loss and
// grad norm is found at the right iteration, with the Megatron offset.
func TestMegatronSpellings(t *testing.T) {
	for _, tc := range []struct{ loss, grad, metric, kind string }{
		{"nan", "1.0", "loss", "nan"},
		{"NaN", "1.0", "loss", "nan"},
		{"NAN", "1.0", "loss", "nan"},
		{"-nan", "1.0", "loss", "nan"},
		{"INF", "1.0", "loss", "inf"},
		{"inf", "inf", "loss", "inf"},
		{"-inf", "1.0", "loss", "-inf"},
		{"-Infinity", "1.0", "loss", "-inf"},
		{"2.0E+00", "nan", "grad_norm", "nan"},
		{"2.0E+00", "Infinity", "grad_norm", "inf"},
		{"2.0E+00", "-inf", "grad_norm", "-inf"},
	} {
		t.Run(tc.loss+"/"+tc.grad, func(t *testing.T) {
			var b strings.Builder
			for it := 1; it <= 4; it++ {
				b.WriteString(megLineText(it, "1.000000E+38", "3.0", 0, 0))
			}
			b.WriteString(megLineText(5, tc.loss, tc.grad, 0, 0))
			b.WriteString(megLineText(6, "nan", "nan", 0, 0))
			l := mustRead(t, writeFiles(t, "rank0.log", b.String()), Options{})
			s := l.Summary()
			f := s.FirstNonFinite
			if f == nil {
				t.Fatal("no first non-finite value")
			}
			if f.Iteration != 5 || f.Step != 4 || f.Metric != tc.metric || f.Kind != tc.kind || !slices.Equal(f.Ranks, []int{0}) || f.Line != 5 {
				t.Errorf("first = %+v; want iteration 5, step 4, %s, %s, rank 0, line 5", *f, tc.metric, tc.kind)
			}
			if s.LastFinite == nil || s.LastFinite.Iteration != 4 || s.LastFinite.Step != 3 {
				t.Errorf("last finite = %+v, want iteration 4, step 3", s.LastFinite)
			}
			if l.Files[0].Format != FormatMegatron || l.Mapping.Offset != -1 || l.Mapping.Text != "step = iteration - 1" || l.Mapping.Source != "default for megatron" {
				t.Errorf("format %q mapping %+v", l.Files[0].Format, l.Mapping)
			}
		})
	}
}

// TestMegatronSkippedBeforeNaN: an fp16 overflow whose grad norm prints nan
// is a skip, and the real NaN comes later.
func TestMegatronSkippedBeforeNaN(t *testing.T) {
	log := megLineText(1, "7.0E+00", "2.0", 0, 0) +
		strings.Replace(megLineText(2, "", "nan", 1, 0), "loss scale: 1.0", "loss scale: 32768.0", 1) +
		megLineText(3, "6.9E+00", "2.0", 0, 0) +
		megLineText(4, "6.8E+00", "nan", 0, 0) +
		megLineText(5, "nan", "nan", 0, 0)
	log = strings.Replace(log, "loss scale: 1.0", "loss scale: 65536.0", 1)
	l := mustRead(t, writeFiles(t, "rank0.log", log), Options{})
	s := l.Summary()
	if s.FirstNonFinite == nil || s.FirstNonFinite.Iteration != 4 || s.FirstNonFinite.Metric != "grad_norm" {
		t.Fatalf("first = %+v, want the grad norm at iteration 4", s.FirstNonFinite)
	}
	if len(s.Skipped) != 1 || s.SkippedTotal != 1 {
		t.Fatalf("skipped = %+v, want one", s.Skipped)
	}
	sk := s.Skipped[0]
	if sk.Iteration != 2 || sk.Step != 1 || !slices.Equal(sk.Ranks, []int{0}) || sk.Approximate ||
		!strings.Contains(sk.Reason, "65536 → 32768") || !strings.Contains(sk.Reason, "skipped iterations: 1") {
		t.Errorf("skip = %+v", sk)
	}
	if s.StageHint != StageBackward {
		t.Errorf("stage hint %q (%s), want backward", s.StageHint, s.StageReason)
	}
	if s.FirstLossLeftOut != nil {
		t.Errorf("a skipped iteration without loss is not a left-out loss: %+v", s.FirstLossLeftOut)
	}
	if s.NaNIterations == nil || *s.NaNIterations != 0 {
		t.Errorf("nan iterations = %v, want 0", s.NaNIterations)
	}
}

func TestMegatronStageHint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lines  []string
		hint   string
		reason string
	}{
		{"grad norm first, loss finite: backward", []string{
			megLineText(1, "2.0E+00", "1.0", 0, 0), megLineText(2, "2.0E+00", "nan", 0, 0), megLineText(3, "nan", "nan", 0, 0)},
			StageBackward, "grad norm went non-finite at step 1 (iteration 2) while the loss"},
		{"loss first: forward", []string{
			megLineText(1, "2.0E+00", "1.0", 0, 0), megLineText(2, "inf", "1.0", 0, 0), megLineText(3, "nan", "nan", 0, 0)},
			StageForward, "loss went non-finite at step 1"},
		{"same iteration: forward", []string{
			megLineText(1, "2.0E+00", "1.0", 0, 0), megLineText(2, "nan", "nan", 0, 0)},
			StageForward, "same step 1"},
		{"loss left out: unknown", []string{
			megLineText(1, "2.0E+00", "1.0", 0, 0), megLineText(2, "", "nan", 0, 0), megLineText(3, "", "nan", 0, 0)},
			"", "Megatron-LM left the loss out from step 1"},
		{"all finite", []string{megLineText(1, "2.0E+00", "1.0", 0, 0)}, "", "no non-finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := mustRead(t, writeFiles(t, "train.log", strings.Join(tc.lines, "")), Options{})
			s := l.Summary()
			if s.StageHint != tc.hint || !strings.Contains(s.StageReason, tc.reason) {
				t.Errorf("hint %q reason %q; want %q with %q", s.StageHint, s.StageReason, tc.hint, tc.reason)
			}
		})
	}
}

// TestMegatronPerRankFiles: rank 1 prints nan one iteration before rank 0.
func TestMegatronPerRankFiles(t *testing.T) {
	var r0, r1 strings.Builder
	for it := 1; it <= 6; it++ {
		l0, l1 := "2.0E+00", "2.0E+00"
		if it >= 5 {
			l0 = "nan"
		}
		if it >= 4 {
			l1 = "nan"
		}
		r0.WriteString(megLineText(it, l0, "1.0", 0, 0))
		r1.WriteString(megLineText(it, l1, "1.0", 0, 0))
	}
	paths := writeFiles(t, "rank0.log", r0.String(), "rank1.log", r1.String())
	l := mustRead(t, paths, Options{})
	s := l.Summary()
	if f := s.FirstNonFinite; f == nil || f.Iteration != 4 || f.Step != 3 || !slices.Equal(f.Ranks, []int{1}) || f.File != paths[1] {
		t.Fatalf("first = %+v, want iteration 4 on rank 1 only", f)
	}
	if len(s.PerRank) != 2 || s.PerRank[0].Rank != 0 || s.PerRank[0].First.Iteration != 5 ||
		s.PerRank[1].Rank != 1 || s.PerRank[1].First.Iteration != 4 {
		t.Fatalf("per rank = %s", jsonOf(t, s.PerRank, ""))
	}
	if s.PerRank[0].LastFinite.Iteration != 4 || s.PerRank[1].LastFinite.Iteration != 3 || s.LastFinite.Iteration != 3 {
		t.Errorf("last finite: overall %+v, rank 0 %+v, rank 1 %+v", s.LastFinite, s.PerRank[0].LastFinite, s.PerRank[1].LastFinite)
	}
	if l.Files[0].Rank != 0 || l.Files[1].Rank != 1 {
		t.Errorf("file ranks %d, %d", l.Files[0].Rank, l.Files[1].Rank)
	}
}

// TestMegatronLaunchPrefixes: one file with torchrun's [rankN]: prefixes.
func TestMegatronLaunchPrefixes(t *testing.T) {
	log := "[rank0]:" + megLineText(1, "2.0", "1.0", 0, 0) +
		"[rank3]:" + megLineText(1, "2.0", "1.0", 0, 0) +
		"[rank3]:" + megLineText(2, "2.0", "inf", 0, 0) +
		"[rank0]:" + megLineText(2, "2.0", "1.0", 0, 0)
	l := mustRead(t, writeFiles(t, "all.log", log), Options{})
	s := l.Summary()
	if f := s.FirstNonFinite; f == nil || !slices.Equal(f.Ranks, []int{3}) || f.Kind != "inf" || f.Line != 3 {
		t.Fatalf("first = %+v", f)
	}
	if l.Files[0].Rank != -1 || !slices.Equal(l.Files[0].Ranks, []int{0, 3}) {
		t.Errorf("file rank %d ranks %v", l.Files[0].Rank, l.Files[0].Ranks)
	}
}

// TestStepOffsetOption: a user offset replaces the default.
func TestStepOffsetOption(t *testing.T) {
	off := 10
	l := mustRead(t, writeFiles(t, "r.log", megLineText(1, "2.0", "1.0", 0, 0)+megLineText(2, "nan", "1.0", 0, 0)), Options{StepOffset: &off})
	s := l.Summary()
	if s.FirstNonFinite.Step != 12 || l.Mapping.Source != "user" || l.Mapping.Text != "step = iteration + 10" {
		t.Errorf("step %d mapping %+v", s.FirstNonFinite.Step, l.Mapping)
	}
	if l.Records[1].Step != 12 {
		t.Errorf("record step %d", l.Records[1].Step)
	}
}
