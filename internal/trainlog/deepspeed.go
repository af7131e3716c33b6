package trainlog

import (
	"bytes"
	"strings"
)

// The kinds of DeepSpeed line.
const (
	dsNone     = iota
	dsOverflow // a loss-scale overflow message: the step is skipped
	dsProgress // the engine's "step=N, skipped=K, lr=..., mom=..."
	dsSteps    // the pipeline engine's "steps: N loss: X ..."
	dsDict     // an HF-Trainer dict "{'loss': X, 'grad_norm': Y, ...}"
)

// The overflow messages, as bits.
const (
	ovSkipping = 1 << iota // "... Skipping step. Attempted loss scale: ..."
	ovGradIter             // "Grad overflow on iteration N"
	ovReducing             // "Reducing dynamic loss scale from X to Y"
)

// dsLine is what one DeepSpeed line says.
type dsLine struct {
	kind int

	// dsOverflow
	ovKind   int    // which message: ovGradIter, ovReducing or ovSkipping
	iter0    int    // "Grad overflow on iteration N": N, the optimizer's 0-based counter; -1 if absent
	textRank int    // "OVERFLOW! Rank N": N; -1 if absent
	note     string // the loss-scale change, e.g. "loss scale 65536 → 32768"
	// scaleFrom and scaleTo are the loss scale before and after the
	// overflow (Absent when the line does not say)
	scaleFrom, scaleTo Value

	// dsProgress and dsSteps
	step    int // N
	skipped int // K of "skipped=K"; -1 if absent

	// dsSteps and dsDict
	loss, grad Value
}

// parseDeepSpeedLine recognises the DeepSpeed lines listed in dsLine.
func parseDeepSpeedLine(line []byte) dsLine {
	d := dsLine{iter0: -1, textRank: -1, skipped: -1}
	switch {
	case bytes.Contains(line, []byte("Skipping step")):
		d.ovKind = ovSkipping
	case bytes.Contains(line, []byte("Grad overflow on iteration")):
		d.ovKind = ovGradIter
	case bytes.Contains(line, []byte("Reducing dynamic loss scale from")):
		d.ovKind = ovReducing
	}
	if d.ovKind != 0 {
		d.kind = dsOverflow
		parseOverflow(line, &d)
		return d
	}
	if i := indexWord(line, "step="); i >= 0 {
		rest := line[i+len("step="):]
		if n, w := leadingCount(rest); w > 0 && bytes.HasPrefix(rest[w:], []byte(", skipped=")) {
			k, kw := leadingCount(rest[w+len(", skipped="):])
			if kw > 0 {
				d.kind, d.step, d.skipped = dsProgress, n, k
				return d
			}
		}
	}
	if i := indexWord(line, "steps: "); i >= 0 {
		rest := line[i+len("steps: "):]
		if n, w := leadingCount(rest); w > 0 && bytes.HasPrefix(rest[w:], []byte(" loss: ")) {
			d.kind, d.step = dsSteps, n
			d.loss = parseValue(firstWord(rest[w+len(" loss: "):]))
			return d
		}
	}
	if i := bytes.Index(line, []byte("{'")); i >= 0 {
		if loss, grad, ok := parseDict(line[i:]); ok {
			d.kind, d.loss, d.grad = dsDict, loss, grad
			return d
		}
	}
	return d
}

// parseOverflow reads the details of an overflow line.
func parseOverflow(line []byte, d *dsLine) {
	if v, ok := after(line, "Grad overflow on iteration"); ok {
		v = bytes.TrimPrefix(v, []byte(":"))
		if n, w := leadingCount(trimBlank(v)); w > 0 {
			d.iter0 = n
		}
	}
	if v, ok := after(line, "OVERFLOW! Rank "); ok {
		if r, n := leadingRank(v); n > 0 {
			d.textRank = r
		}
	}
	word := func(key string) string {
		v, ok := after(line, key)
		if !ok {
			return ""
		}
		w := string(firstWord(v))
		return strings.TrimRight(w, ",.")
	}
	attempted := word("Attempted loss scale:")
	switch {
	case attempted != "" && word("reducing to") != "":
		d.note = "loss scale " + attempted + " → " + word("reducing to")
		d.scaleFrom, d.scaleTo = parseValue([]byte(attempted)), parseValue([]byte(word("reducing to")))
	case attempted != "" && word("but hysteresis is") != "":
		d.note = "loss scale " + attempted + " kept, hysteresis " + word("but hysteresis is") +
			" → " + word("Reducing hysteresis to")
		d.scaleFrom = parseValue([]byte(attempted))
		d.scaleTo = d.scaleFrom
	case word("Reducing dynamic loss scale from") != "":
		v, _ := after(line, "Reducing dynamic loss scale from")
		from := strings.TrimRight(string(firstWord(v)), ",.")
		to, _ := after(v, " to ")
		d.note = "loss scale " + from + " → " + strings.TrimRight(string(firstWord(to)), ",.")
		d.scaleFrom, d.scaleTo = parseValue([]byte(from)), parseValue([]byte(strings.TrimRight(string(firstWord(to)), ",.")))
	case attempted != "":
		d.note = "loss scale " + attempted
	}
	if d.note == "" {
		d.note = "fp16 overflow"
	} else {
		d.note = "fp16 overflow, " + d.note
	}
}

// after returns what follows the first key in line.
func after(line []byte, key string) ([]byte, bool) {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return nil, false
	}
	return line[i+len(key):], true
}

// indexWord returns the first index of key in line not preceded by a
// letter, digit or underscore; -1 if none.
func indexWord(line []byte, key string) int {
	for off := 0; ; {
		i := bytes.Index(line[off:], []byte(key))
		if i < 0 {
			return -1
		}
		i += off
		if i == 0 || !isWordByte(line[i-1]) {
			return i
		}
		off = i + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// leadingCount reads the digits at the start of b; w is their number, 0 if
// there are none or the number exceeds maxCount.
func leadingCount(b []byte) (n, w int) {
	for w < len(b) && isDigit(b[w]) {
		w++
	}
	n, ok := parseCount(b[:w])
	if !ok {
		return 0, 0
	}
	return n, w
}

// parseDict reads the 'loss' and 'grad_norm' of a Python dict printed by
// the HF Trainer, which starts at b[0]. ok is false when it holds neither.
func parseDict(b []byte) (loss, grad Value, ok bool) {
	end := bytes.IndexByte(b, '}')
	if end < 0 {
		return loss, grad, false
	}
	b = b[1:end]
	for len(b) > 0 {
		b = trimBlank(b)
		if len(b) == 0 || b[0] != '\'' {
			return loss, grad, ok
		}
		q := bytes.IndexByte(b[1:], '\'')
		if q < 0 {
			return loss, grad, ok
		}
		key := b[1 : 1+q]
		b = trimBlank(b[2+q:])
		if len(b) == 0 || b[0] != ':' {
			return loss, grad, ok
		}
		b = b[1:]
		// The value runs to the next comma outside brackets.
		depth, i := 0, 0
		for ; i < len(b); i++ {
			c := b[i]
			if c == '[' || c == '(' {
				depth++
			} else if (c == ']' || c == ')') && depth > 0 {
				depth--
			} else if c == ',' && depth == 0 {
				break
			}
		}
		val := trimBlank(b[:i])
		switch string(key) {
		case "loss":
			loss, ok = parseValue(val), true
		case "grad_norm":
			grad, ok = parseValue(val), true
		}
		if i < len(b) {
			i++
		}
		b = b[i:]
	}
	return loss, grad, ok
}
