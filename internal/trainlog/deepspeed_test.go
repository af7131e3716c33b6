package trainlog

import (
	"slices"
	"strings"
	"testing"
)

const dsPrefix = "[2023-07-24 13:21:32,378] [INFO] "

func dsProgressLine(step, skipped int) string {
	return dsPrefix + "[logging.py:96:log_dist] [Rank 0] step=" + itoa(step) + ", skipped=" + itoa(skipped) +
		", lr=[1e-05], mom=[(0.9, 0.999)]\n"
}

func TestParseDeepSpeedLine(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		kind       int
		ovKind     int
		iter0      int
		textRank   int
		note       string
		step       int
		loss, grad Kind
	}{
		{"overflow", dsPrefix + "[loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 3 Skipping step. Attempted loss scale: 65536, reducing to 32768",
			dsOverflow, ovSkipping, -1, 3, "fp16 overflow, loss scale 65536 → 32768", 0, Absent, Absent},
		{"hysteresis", dsPrefix + "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 131072, but hysteresis is 2. Reducing hysteresis to 1",
			dsOverflow, ovSkipping, -1, 0, "fp16 overflow, loss scale 131072 kept, hysteresis 2 → 1", 0, Absent, Absent},
		{"old spelling", "OVERFLOW! Skipping step. Attempted loss scale: 1024.0, reducing to 512.0",
			dsOverflow, ovSkipping, -1, -1, "fp16 overflow, loss scale 1024.0 → 512.0", 0, Absent, Absent},
		{"fused", dsPrefix + "[unfused_optimizer.py:207:step] [deepspeed] fp16 dynamic loss scale overflow! Skipping step. Attempted loss scale: 65536.0, reducing to 32768.0",
			dsOverflow, ovSkipping, -1, -1, "fp16 overflow, loss scale 65536.0 → 32768.0", 0, Absent, Absent},
		{"grad overflow colon", dsPrefix + "[unfused_optimizer.py:281:_update_scale] Grad overflow on iteration: 4",
			dsOverflow, ovGradIter, 4, -1, "fp16 overflow", 0, Absent, Absent},
		{"grad overflow", "Grad overflow on iteration 0", dsOverflow, ovGradIter, 0, -1, "fp16 overflow", 0, Absent, Absent},
		{"reducing", dsPrefix + "[fused_optimizer.py:348:_update_scale] Reducing dynamic loss scale from 65536 to 32768.0",
			dsOverflow, ovReducing, -1, -1, "fp16 overflow, loss scale 65536 → 32768.0", 0, Absent, Absent},
		{"progress", dsProgressLine(10, 2), dsProgress, 0, -1, -1, "", 10, Absent, Absent},
		{"old progress", "rank:0 step=7, skipped=0, lr=[0.1], mom=[0.9]", dsProgress, 0, -1, -1, "", 7, Absent, Absent},
		{"global_step= is not step=", "global_step=7, skipped=0", dsNone, 0, -1, -1, "", 0, Absent, Absent},
		{"pipeline steps", "steps: 20 loss: nan iter time (s): 0.500 samples/sec: 64.000", dsSteps, 0, -1, -1, "", 20, NaN, Absent},
		{"hf dict", "{'loss': 2.345, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.1}", dsDict, 0, -1, -1, "", 0, Finite, NaN},
		{"hf dict after tqdm", " 10%|█         | 10/100 [00:05<00:45, 2.00it/s]{'loss': inf, 'learning_rate': [1e-05, 2e-05], 'epoch': 0.1}", dsDict, 0, -1, -1, "", 0, PosInf, Absent},
		{"hf eval dict", "{'eval_loss': nan, 'eval_runtime': 1.0}", dsNone, 0, -1, -1, "", 0, Absent, Absent},
		{"unrelated", "hello world", dsNone, 0, -1, -1, "", 0, Absent, Absent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := parseDeepSpeedLine([]byte(tc.line))
			if d.kind != tc.kind {
				t.Fatalf("kind = %d, want %d", d.kind, tc.kind)
			}
			switch d.kind {
			case dsOverflow:
				if d.ovKind != tc.ovKind || d.iter0 != tc.iter0 || d.textRank != tc.textRank || d.note != tc.note {
					t.Errorf("overflow %d iter0 %d rank %d note %q; want %d %d %d %q", d.ovKind, d.iter0, d.textRank, d.note, tc.ovKind, tc.iter0, tc.textRank, tc.note)
				}
			case dsProgress, dsSteps, dsDict:
				if d.step != tc.step || d.loss.Kind != tc.loss || d.grad.Kind != tc.grad {
					t.Errorf("step %d loss %v grad %v; want %d %v %v", d.step, d.loss.Kind, d.grad.Kind, tc.step, tc.loss, tc.grad)
				}
			}
		})
	}
}

// TestDeepSpeedOverflowSeveralRanks: one log where ranks 0, 1 and 2 each
// print the overflow of step 3, with progress lines every step; then the
// HF Trainer prints a NaN grad norm.
func TestDeepSpeedOverflowSeveralRanks(t *testing.T) {
	log := "[2023-07-24 13:21:30] [INFO] DeepSpeed info: version=0.9.5\n" +
		dsProgressLine(1, 0) +
		"{'loss': 2.5, 'grad_norm': 1.5, 'learning_rate': 1e-05, 'epoch': 0.01}\n" +
		dsProgressLine(2, 0) +
		"{'loss': 2.4, 'grad_norm': 1.4, 'learning_rate': 1e-05, 'epoch': 0.02}\n" +
		"[deepscale] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768\n" +
		"[deepscale] OVERFLOW! Rank 1 Skipping step. Attempted loss scale: 65536, reducing to 32768\n" +
		"[deepscale] OVERFLOW! Rank 2 Skipping step. Attempted loss scale: 65536, reducing to 32768\n" +
		dsProgressLine(3, 1) +
		"{'loss': 2.3, 'grad_norm': inf, 'learning_rate': 1e-05, 'epoch': 0.03}\n" +
		dsProgressLine(4, 1) +
		"{'loss': 2.2, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.04}\n" +
		dsProgressLine(5, 1) +
		"{'loss': nan, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.05}\n"
	l := mustRead(t, writeFiles(t, "ds.log", log), Options{})
	s := l.Summary()
	if l.Files[0].Format != FormatDeepSpeed || l.Mapping.Offset != -1 || l.Mapping.Source != "default for deepspeed" {
		t.Fatalf("format %q mapping %+v", l.Files[0].Format, l.Mapping)
	}
	if s.SkippedTotal != 1 || len(s.Skipped) != 1 {
		t.Fatalf("skipped = %s", jsonOf(t, s.Skipped, ""))
	}
	sk := s.Skipped[0]
	// The inf grad norm of the dict line after the skipped step 3 is the
	// overflow as the HF Trainer saw it: the dict line (rank unknown) joins
	// the skip, and the real first non-finite value is the NaN of step 4.
	if sk.Iteration != 3 || sk.Step != 2 || !slices.Equal(sk.Ranks, []int{-1, 0, 1, 2}) || sk.Approximate ||
		sk.Reason != "fp16 overflow, loss scale 65536 → 32768" || sk.Line != 6 {
		t.Errorf("skip = %+v", sk)
	}
	f := s.FirstNonFinite
	if f == nil || f.Metric != "grad_norm" || f.Iteration != 4 || f.Kind != "nan" || !slices.Equal(f.Ranks, []int{-1}) || f.Line != 12 {
		t.Fatalf("first = %+v", f)
	}
	if l := s.FirstNonFiniteLoss; l == nil || l.Iteration != 5 || l.Step != 4 {
		t.Errorf("first loss = %+v", l)
	}
	if s.StageHint != StageBackward {
		t.Errorf("hint %q: %s", s.StageHint, s.StageReason)
	}
}

// TestDeepSpeedCountedOverflows: without progress lines, overflows count
// from 0 and are approximate; consecutive messages with the same text on
// the same rank are separate overflows; hysteresis is a skip too.
func TestDeepSpeedCountedOverflows(t *testing.T) {
	log := dsPrefix + "[loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 4294967296, but hysteresis is 2. Reducing hysteresis to 1\n" +
		"step:0, loss:5.453125\n" +
		dsPrefix + "[loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 4294967296, reducing to 2147483648\n" +
		dsPrefix + "[loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1\n" +
		dsPrefix + "[loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1\n"
	l := mustRead(t, writeFiles(t, "train.log", log), Options{})
	s := l.Summary()
	if s.SkippedTotal != 4 || s.FirstNonFinite != nil {
		t.Fatalf("summary = %s", jsonOf(t, s, ""))
	}
	for i, sk := range s.Skipped {
		if sk.Iteration != i+1 || sk.Step != i || !sk.Approximate || !slices.Equal(sk.Ranks, []int{0}) {
			t.Errorf("skip %d = %+v", i, sk)
		}
	}
	if !strings.Contains(s.Skipped[0].Reason, "hysteresis 2 → 1") {
		t.Errorf("reason %q", s.Skipped[0].Reason)
	}
	for _, r := range l.Records {
		if !r.Skipped || !r.Inferred {
			t.Errorf("record %+v", r)
		}
	}
}

// TestDeepSpeedGradOverflowExact: "Grad overflow on iteration N" counts
// from 0 and merges with the messages that follow it.
func TestDeepSpeedGradOverflowExact(t *testing.T) {
	log := "Model Parameters: 1.429 B, Latency: 0.64s\n" +
		dsPrefix + "[fused_optimizer.py:347:_update_scale]\n" +
		"Grad overflow on iteration 7\n" +
		dsPrefix + "[fused_optimizer.py:348:_update_scale] Reducing dynamic loss scale from 65536 to 32768.0\n" +
		dsPrefix + "[logging.py:96:log_dist] [Rank 0] Overflow detected. Skipping step. Attempted loss scale: 65536, reducing to 32768.0\n" +
		"Model Parameters: 1.429 B, Latency: 1.10s\n" +
		dsPrefix + "[logging.py:96:log_dist] [Rank 0] Overflow detected. Skipping step. Attempted loss scale: 32768.0, reducing to 16384.0\n"
	l := mustRead(t, writeFiles(t, "node0.log", log), Options{})
	s := l.Summary()
	if s.SkippedTotal != 2 {
		t.Fatalf("skipped = %s", jsonOf(t, s.Skipped, ""))
	}
	a, b := s.Skipped[0], s.Skipped[1]
	if a.Iteration != 8 || a.Step != 7 || a.Approximate || !slices.Equal(a.Ranks, []int{0}) || a.Line != 3 ||
		a.Reason != "fp16 overflow, loss scale 65536 → 32768.0" {
		t.Errorf("first skip = %+v", a)
	}
	if b.Iteration != 9 || !b.Approximate {
		t.Errorf("second skip = %+v", b)
	}
}

// TestDeepSpeedSkippedCounter: a rise of skipped= with no overflow message
// (filtered by the log level) is a skip at that step.
func TestDeepSpeedSkippedCounter(t *testing.T) {
	log := dsProgressLine(1, 0) + dsProgressLine(2, 0) + dsProgressLine(3, 1) + dsProgressLine(4, 1) +
		"steps: 5 loss: nan iter time (s): 0.500 samples/sec: 64.000\n"
	l := mustRead(t, writeFiles(t, "rank0.log", log), Options{})
	s := l.Summary()
	if s.SkippedTotal != 1 || s.Skipped[0].Iteration != 3 || s.Skipped[0].Approximate || s.Skipped[0].Reason != "skipped= rose from 0 to 1" {
		t.Fatalf("skipped = %s", jsonOf(t, s.Skipped, ""))
	}
	if f := s.FirstNonFinite; f == nil || f.Iteration != 5 || f.Step != 4 || f.Metric != "loss" || !slices.Equal(f.Ranks, []int{0}) {
		t.Errorf("first = %+v", f)
	}
}

// TestMegatronDeepSpeedOverflow: Megatron-DeepSpeed prints both; the
// overflow belongs to the iteration after the last iteration line.
func TestMegatronDeepSpeedOverflow(t *testing.T) {
	log := megLineText(1, "7.0", "1.0", 0, 0) + megLineText(2, "7.0", "1.0", 0, 0) +
		dsPrefix + "[loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768\n" +
		megLineText(3, "", "", 1, 0) + megLineText(4, "nan", "1.0", 0, 0)
	l := mustRead(t, writeFiles(t, "out.log", log), Options{})
	s := l.Summary()
	if l.Files[0].Format != FormatMegatron || s.SkippedTotal != 1 || s.Skipped[0].Iteration != 3 ||
		!slices.Equal(s.Skipped[0].Ranks, []int{-1, 0}) || s.Skipped[0].Approximate {
		t.Fatalf("format %q skipped %s", l.Files[0].Format, jsonOf(t, s.Skipped, ""))
	}
	if f := s.FirstNonFinite; f == nil || f.Iteration != 4 {
		t.Errorf("first = %+v", f)
	}
}
