package trainlog

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The reference Megatron-LM line parser: slow, regexp-based, written from
// the grammar in parseMegatronLine's documentation.
var (
	refIteration = regexp.MustCompile(`iteration[ \t]+([0-9]+)[ \t]*/[ \t]*([0-9]+)[ \t]*\|`)
	refDecimal   = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)
	refSpecial   = regexp.MustCompile(`^([+-]?)([nN][aA][nN]|[iI][nN][fF]|[iI][nN][fF][iI][nN][iI][tT][yY])$`)
	refCount     = regexp.MustCompile(`^[0-9]+$`)
	refWord      = regexp.MustCompile(`^[ \t]*([^ \t]*)`)
)

func refValue(word string) Value {
	if m := refSpecial.FindStringSubmatch(word); m != nil {
		switch {
		case strings.EqualFold(m[2], "nan"):
			return Value{NaN, math.NaN()}
		case m[1] == "-":
			return Value{NegInf, math.Inf(-1)}
		default:
			return Value{PosInf, math.Inf(1)}
		}
	}
	if !refDecimal.MatchString(word) {
		return Value{}
	}
	f, err := strconv.ParseFloat(word, 64)
	switch {
	case err == nil && !math.IsInf(f, 0):
		return Value{Finite, f}
	case math.IsInf(f, 1):
		return Value{PosInf, f}
	case math.IsInf(f, -1):
		return Value{NegInf, f}
	}
	return Value{}
}

func refCountOf(word string) int {
	if !refCount.MatchString(word) {
		return -1
	}
	n, err := strconv.ParseInt(word, 10, 64)
	if err != nil || n > maxCount {
		return -1
	}
	return int(n)
}

func refMegatron(line string) (m megLine, ok bool) {
	loc := refIteration.FindStringSubmatchIndex(line)
	if loc == nil {
		return m, false
	}
	it := refCountOf(line[loc[2]:loc[3]])
	if it < 0 {
		return m, false
	}
	m.iter, m.total = it, refCountOf(line[loc[4]:loc[5]])
	m.skipped, m.nanIters = -1, -1
	seen := map[string]bool{}
	var firstLoss, firstLossWord string
	haveFirst := false
	for _, field := range strings.Split(line[loc[1]:], "|") {
		key, rest, found := strings.Cut(field, ":")
		if !found {
			continue
		}
		key = strings.Trim(key, " \t")
		word := refWord.FindStringSubmatch(rest)[1]
		if !seen[key] {
			seen[key] = true
			switch key {
			case "lm loss":
				m.lossKey, m.loss = []byte(key), refValue(word)
			case "grad norm":
				m.grad = refValue(word)
			case "loss scale":
				m.lossScale = refValue(word)
			case "number of skipped iterations":
				m.skipped = refCountOf(word)
			case "number of nan iterations":
				m.nanIters = refCountOf(word)
			}
		}
		if !haveFirst && strings.HasSuffix(key, "loss") {
			haveFirst, firstLoss, firstLossWord = true, key, word
		}
	}
	if m.lossKey == nil && haveFirst {
		m.lossKey, m.loss = []byte(firstLoss), refValue(firstLossWord)
	}
	return m, true
}

func sameValue(a, b Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	return a.Kind == NaN || math.Float64bits(a.V) == math.Float64bits(b.V)
}

// FuzzMegatronLine checks the Megatron-LM line parser against the
// reference parser.
func FuzzMegatronLine(f *testing.F) {
	for _, s := range []string{
		megLineText(9, "7.123456E+00", "nan", 0, 1),
		megLineText(3, "", "", 1, 0),
		" iteration 5/10 | mtp_1 loss: 1.0 | lm loss: NAN | z_loss: 2 |",
		"iteration\t7 /8| grad norm:Infinity| loss scale: -inf |",
		" validation loss at iteration 100 | lm loss value: 2.3 |",
		"iterations 3/4 x iteration 5/6 | loss: 1 | lm loss: -1e999 |",
		" iteration 99999999999999999999/100 | loss: 1 |",
		" iteration 1/2 | number of skipped iterations: x | number of skipped iterations: 1 |",
		" iteration 1/2 | lm loss : .5e-3 junk| grad norm: +nan|",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		got, gotOK := parseMegatronLine([]byte(line))
		want, wantOK := refMegatron(line)
		if gotOK != wantOK {
			t.Fatalf("%q: ok %v, reference %v", line, gotOK, wantOK)
		}
		if !gotOK {
			return
		}
		if got.iter != want.iter || got.total != want.total || !bytes.Equal(got.lossKey, want.lossKey) ||
			!sameValue(got.loss, want.loss) || !sameValue(got.grad, want.grad) || !sameValue(got.lossScale, want.lossScale) ||
			got.skipped != want.skipped || got.nanIters != want.nanIters {
			t.Fatalf("%q:\n got  %+v\n want %+v", line, got, want)
		}
	})
}

// FuzzRead reads arbitrary bytes as a log file: it must not panic, and the
// summary must agree with itself.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		megLineText(1, "2.0", "nan", 0, 0) + megLineText(2, "", "nan", 1, 0),
		"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2, reducing to 1\nGrad overflow on iteration 3\n[Rank 1] step=2, skipped=1, lr=[1]\n{'loss': nan}\n",
		`{"rank": 1, "steps": [{"step": 0, "loss": NaN, "nonfinite_params": ["a"]}]}`,
		"{\"step\": 1, \"loss\": Infinity}\n{\"step\": 2\n",
		"[\n{\"iter\": 3, \"grad_norm\": -Infinity}]",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "rank3.log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Skip(err)
		}
		l, err := Read(context.Background(), []string{path}, Options{Patterns: Patterns{Loss: `loss[=:] *(\S+)`}})
		if err != nil {
			return
		}
		s := l.Summary()
		if s.FirstNonFinite != nil {
			for _, r := range s.PerRank {
				if r.First != nil && r.First.Step < s.FirstNonFinite.Step {
					t.Fatalf("rank %d first at step %d before the overall first %d", r.Rank, r.First.Step, s.FirstNonFinite.Step)
				}
			}
			if s.LastFinite != nil && s.LastFinite.Step >= s.FirstNonFinite.Step {
				t.Fatalf("last finite %d not before first %d", s.LastFinite.Step, s.FirstNonFinite.Step)
			}
		}
		for _, sk := range s.Skipped {
			if s.FirstNonFinite != nil && len(sk.Ranks) == 0 {
				t.Fatal("skip without ranks")
			}
		}
		if l.Files[0].Records < len(l.Records) {
			t.Fatalf("%d records kept of %d", len(l.Records), l.Files[0].Records)
		}
	})
}
