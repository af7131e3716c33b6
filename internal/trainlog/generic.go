package trainlog

import (
	"fmt"
	"regexp"
)

// textPattern is one compiled user pattern for text lines.
type textPattern struct {
	re    *regexp.Regexp
	group bool
}

// textPatterns are the compiled Patterns; a nil field is not set.
type textPatterns struct {
	step, loss, grad *textPattern
}

func (t textPatterns) any() bool { return t.step != nil || t.loss != nil || t.grad != nil }

// compilePatterns compiles the user's patterns for text files.
func compilePatterns(p Patterns) (textPatterns, error) {
	var t textPatterns
	for _, x := range []struct {
		name, expr string
		dst        **textPattern
	}{{"step", p.Step, &t.step}, {"loss", p.Loss, &t.loss}, {"grad_norm", p.GradNorm, &t.grad}} {
		if x.expr == "" {
			continue
		}
		if err := checkExpr(x.name, x.expr); err != nil {
			return t, err
		}
		re := regexp.MustCompile(x.expr)
		*x.dst = &textPattern{re: re, group: re.NumSubexp() == 1}
	}
	return t, nil
}

// find applies the pattern to a line and returns the value's text: the
// capture group, or the number right after the match (past blanks, ':' and
// '='), cut to the characters a number may hold.
func (p *textPattern) find(line []byte) ([]byte, bool) {
	if p == nil {
		return nil, false
	}
	m := p.re.FindSubmatchIndex(line)
	if m == nil {
		return nil, false
	}
	var v []byte
	if p.group {
		if m[2] < 0 {
			return nil, false
		}
		v = trimBlank(line[m[2]:m[3]])
	} else {
		v = line[m[1]:]
		for len(v) > 0 && (isBlank(v[0]) || v[0] == ':' || v[0] == '=') {
			v = v[1:]
		}
	}
	return numberPrefix(v), true
}

// numberPrefix returns the leading characters of b that may be part of a
// number or of nan/inf/infinity.
func numberPrefix(b []byte) []byte {
	i := 0
	for i < len(b) {
		c := b[i] | 0x20 // lower case for letters
		if isDigit(b[i]) || b[i] == '.' || b[i] == '+' || b[i] == '-' || ('a' <= c && c <= 'z' && isNumberLetter(c)) {
			i++
			continue
		}
		break
	}
	return b[:i]
}

// isNumberLetter reports the letters of e, nan, inf and infinity.
func isNumberLetter(c byte) bool {
	switch c {
	case 'e', 'n', 'a', 'i', 'f', 't', 'y':
		return true
	}
	return false
}

// genericState is the pattern reader's state for one rank.
type genericState struct {
	step     int
	haveStep bool
	ordinal  int
}

// genericLine reads one line through the user's patterns and returns the
// record it completes, if any. warn is set for a value line seen before any
// step line when a step pattern is given.
func genericLine(t textPatterns, st *genericState, line []byte) (rec Record, ok bool, warn string) {
	if v, found := t.step.find(line); found {
		if n, ok := parseCount(v); ok {
			st.step, st.haveStep = n, true
		} else {
			warn = fmt.Sprintf("step pattern matched but %q is not a step number", clip(v))
		}
	}
	lv, lok := t.loss.find(line)
	gv, gok := t.grad.find(line)
	if !lok && !gok {
		return rec, false, warn
	}
	rec.Rank = -1
	switch {
	case t.step == nil:
		rec.Iteration, rec.Inferred = st.ordinal, true
		st.ordinal++
	case st.haveStep:
		rec.Iteration = st.step
	default:
		return rec, false, "value before any line matching the step pattern"
	}
	if lok {
		rec.Loss = parseValue(lv)
	}
	if gok {
		rec.GradNorm = parseValue(gv)
	}
	return rec, true, warn
}

// clip shortens text quoted in a warning.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
