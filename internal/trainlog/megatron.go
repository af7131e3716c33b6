package trainlog

import "bytes"

// megLine is what one Megatron-LM training_log line says.
type megLine struct {
	iter, total int
	// lossKey is the key the loss was read from ("lm loss", else the first
	// key ending in "loss"); nil when the line prints no loss. It aliases
	// the line.
	lossKey   []byte
	loss      Value
	grad      Value
	lossScale Value
	skipped   int // "number of skipped iterations", -1 if absent or unreadable
	nanIters  int // "number of nan iterations", -1 if absent or unreadable
}

// parseMegatronLine reads a training_log line. The line must contain
// "iteration", blanks, the iteration, "/", the number of iterations and "|"
// (blanks allowed around "/" and before "|"; the first such place counts);
// the text after it is split at "|" into "key: value" fields. A value is
// the first blank-separated word after the colon. ok is false when the line
// is not such a line or the iteration is larger than maxCount.
func parseMegatronLine(line []byte) (m megLine, ok bool) {
	rest, ok := findIteration(line, &m)
	if !ok {
		return m, false
	}
	m.skipped, m.nanIters = -1, -1
	var firstLoss, firstLossVal []byte
	var lmLoss, lmLossVal []byte
	haveGrad, haveScale := false, false
	for len(rest) > 0 {
		var field []byte
		if i := bytes.IndexByte(rest, '|'); i >= 0 {
			field, rest = rest[:i], rest[i+1:]
		} else {
			field, rest = rest, nil
		}
		colon := bytes.IndexByte(field, ':')
		if colon < 0 {
			continue
		}
		key := trimBlank(field[:colon])
		val := firstWord(field[colon+1:])
		switch string(key) {
		case "lm loss":
			if lmLoss == nil {
				lmLoss, lmLossVal = key, val
			}
		case "grad norm":
			if !haveGrad {
				haveGrad = true
				m.grad = parseValue(val)
			}
		case "loss scale":
			if !haveScale {
				haveScale = true
				m.lossScale = parseValue(val)
			}
		case "number of skipped iterations":
			if m.skipped == -1 {
				if n, ok := parseCount(val); ok {
					m.skipped = n
				} else {
					m.skipped = -2 // present but unreadable: do not look again
				}
			}
		case "number of nan iterations":
			if m.nanIters == -1 {
				if n, ok := parseCount(val); ok {
					m.nanIters = n
				} else {
					m.nanIters = -2
				}
			}
		}
		if firstLoss == nil && bytes.HasSuffix(key, []byte("loss")) {
			firstLoss, firstLossVal = key, val
		}
	}
	m.skipped = max(m.skipped, -1)
	m.nanIters = max(m.nanIters, -1)
	switch {
	case lmLoss != nil:
		m.lossKey, m.loss = lmLoss, parseValue(lmLossVal)
	case firstLoss != nil:
		m.lossKey, m.loss = firstLoss, parseValue(firstLossVal)
	}
	return m, true
}

// findIteration finds the first "iteration N/M |" in line, fills m.iter and
// m.total and returns the text after the "|".
func findIteration(line []byte, m *megLine) ([]byte, bool) {
	const word = "iteration"
	for off := 0; off < len(line); {
		i := bytes.Index(line[off:], []byte(word))
		if i < 0 {
			return nil, false
		}
		start := off + i + len(word)
		off += i + 1
		p := start
		if p >= len(line) || !isBlank(line[p]) {
			continue
		}
		for p < len(line) && isBlank(line[p]) {
			p++
		}
		d := p
		for p < len(line) && isDigit(line[p]) {
			p++
		}
		if p == d {
			continue
		}
		iterDigits := line[d:p]
		for p < len(line) && isBlank(line[p]) {
			p++
		}
		if p >= len(line) || line[p] != '/' {
			continue
		}
		p++
		for p < len(line) && isBlank(line[p]) {
			p++
		}
		d = p
		for p < len(line) && isDigit(line[p]) {
			p++
		}
		if p == d {
			continue
		}
		totalDigits := line[d:p]
		for p < len(line) && isBlank(line[p]) {
			p++
		}
		if p >= len(line) || line[p] != '|' {
			continue
		}
		// The leftmost place that has the shape decides, even when its
		// numbers are too large.
		it, ok1 := parseCount(iterDigits)
		total, ok2 := parseCount(totalDigits)
		if !ok1 {
			return nil, false
		}
		m.iter = it
		if ok2 {
			m.total = total
		} else {
			m.total = -1
		}
		return line[p+1:], true
	}
	return nil, false
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// trimBlank removes spaces and tabs at both ends.
func trimBlank(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isBlank(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// firstWord returns the first blank-separated word of b.
func firstWord(b []byte) []byte {
	b = trimBlank(b)
	for i, c := range b {
		if isBlank(c) {
			return b[:i]
		}
	}
	return b
}
