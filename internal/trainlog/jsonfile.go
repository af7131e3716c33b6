package trainlog

import (
	"bytes"
	"errors"
	"io"
	"math"
	"regexp"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

const (
	maxMembers   = 256 // scalar members kept per object
	maxNames     = 64  // names kept per record
	maxNameBytes = 256 // bytes kept per name
	maxInterned  = 4096
)

// keyMatcher picks the member of an object that holds a step, loss or grad
// norm.
type keyMatcher struct {
	exact []string       // names tried first, in order
	re    *regexp.Regexp // then the first key it matches
	loss  bool           // then the first key containing "loss" but not "scale"
}

func (k *keyMatcher) pick(ms []jmember) int {
	for _, name := range k.exact {
		for i := range ms {
			if ms[i].key == name {
				return i
			}
		}
	}
	if k.re != nil {
		for i := range ms {
			if k.re.MatchString(ms[i].key) {
				return i
			}
		}
	}
	if k.loss {
		for i := range ms {
			low := strings.ToLower(ms[i].key)
			if strings.Contains(low, "loss") && !strings.Contains(low, "scale") {
				return i
			}
		}
	}
	return -1
}

// jsonPatterns are the key matchers of a JSON file.
type jsonPatterns struct{ step, loss, grad, scale keyMatcher }

func newJSONPatterns(p Patterns) jsonPatterns {
	user := func(expr string, def []string, loss bool) keyMatcher {
		if expr == "" {
			return keyMatcher{exact: def, loss: loss}
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return keyMatcher{exact: []string{expr}}
		}
		return keyMatcher{exact: []string{expr}, re: re}
	}
	return jsonPatterns{
		step:  user(p.Step, []string{"step", "iteration", "iter", "global_step"}, false),
		loss:  user(p.Loss, []string{"loss", "lm loss", "local_loss", "train_loss"}, true),
		grad:  user(p.GradNorm, []string{"grad_norm", "grad norm", "gradient_norm"}, false),
		scale: keyMatcher{exact: []string{"loss_scale", "loss scale", "lossscale", "loss-scale"}},
	}
}

// jmember is one scalar member of an object.
type jmember struct {
	key string
	val Value
}

// jframe is one open object or array.
type jframe struct {
	object  bool
	key     string // the current member name (objects)
	line    int    // where the object starts
	members []jmember
	names   []string // names from list-of-strings members (objects), or being collected (arrays)
	collect bool     // an array of names under a key containing "nonfinite" or "nan"
	rank    int      // the object's own "rank", -1 if none
}

// jsonFile reads one JSON or JSON Lines file.
type jsonFile struct {
	path     string
	pats     jsonPatterns
	warn     *fileWarnings
	sink     *sink
	fileRank int // the top-level objects' "rank", -1 if none
	lines    int

	frames  []*jframe // reused frames, by depth
	intern  map[string]string
	badStep bool

	rankConflict bool // top-level objects name different ranks
}

func newJSONFile(path string, p Patterns, w *fileWarnings, s *sink) *jsonFile {
	return &jsonFile{path: path, pats: newJSONPatterns(p), warn: w, sink: s, fileRank: -1, intern: map[string]string{}}
}

func lexOptions() jsonlex.Options {
	return jsonlex.Options{WindowSize: 64 << 10, MaxDepth: 256, MaxStringLen: 1 << 20}
}

// readDoc reads a file holding one JSON document.
func (j *jsonFile) readDoc(r io.Reader) {
	lc := &lineCounter{r: r}
	lx := jsonlex.New(lc, lexOptions())
	err := j.walk(lx, lc.lineOf)
	lc.lineOf(lc.off + 1)
	j.lines = lc.line
	if lc.off > 0 && lc.last != '\n' {
		j.lines++
	}
	if err != nil {
		var se *jsonlex.SyntaxError
		switch {
		case errors.As(err, &se) && se.Truncated:
			j.warn.add(lc.lineOf(se.Offset), "the JSON document ends early (truncated at byte %d): records after it are missing", se.Offset)
		case errors.As(err, &se):
			j.warn.add(lc.lineOf(se.Offset), "bad JSON at byte %d: %s", se.Offset, se.Msg)
		default:
			j.warn.add(0, "read stopped: %v", err)
		}
	}
}

// readLines reads a JSON Lines file, one document per line.
func (j *jsonFile) readLines(lr *lineReader) {
	lx := jsonlex.New(nil, lexOptions())
	var br bytes.Reader
	for {
		line, cut, ok := lr.next()
		if !ok {
			break
		}
		n := lr.line
		t := trimBlank(line)
		if len(t) == 0 {
			continue
		}
		if cut {
			j.warn.add(n, "line longer than %d bytes: skipped", lr.max)
			continue
		}
		br.Reset(t)
		lx.Reset(&br)
		if err := j.walk(lx, func(int64) int { return n }); err != nil {
			var se *jsonlex.SyntaxError
			if errors.As(err, &se) {
				j.warn.add(n, "bad JSON at column %d: %s", se.Offset+1, se.Msg)
			} else {
				j.warn.add(n, "bad JSON: %v", err)
			}
		}
	}
	j.lines = lr.line
	if err := lr.readErr(); err != nil {
		j.warn.add(lr.line+1, "read stopped: %v", err)
	}
}

// walk reads the tokens of one document and emits a record for every
// object holding a step key.
func (j *jsonFile) walk(lx *jsonlex.Lexer, lineOf func(int64) int) error {
	depth := 0
	for {
		tok, err := lx.Next()
		if err != nil {
			return err
		}
		var top *jframe
		if depth > 0 {
			top = j.frames[depth-1]
		}
		switch tok.Kind {
		case jsonlex.EOF:
			return nil
		case jsonlex.ObjectStart, jsonlex.ArrayStart:
			f := j.push(depth)
			depth++
			f.object = tok.Kind == jsonlex.ObjectStart
			if f.object {
				f.line = lineOf(tok.Offset)
			} else {
				f.collect = top != nil && top.object && isNamesKey(top.key)
			}
		case jsonlex.ObjectEnd:
			depth--
			j.endObject(depth)
		case jsonlex.ArrayEnd:
			depth--
			f := j.frames[depth]
			if f.collect && depth > 0 {
				p := j.frames[depth-1]
				for _, s := range f.names {
					if len(p.names) < maxNames {
						p.names = append(p.names, s)
					}
				}
			}
		case jsonlex.Name:
			top.key = j.internKey(tok.Bytes)
		default:
			j.scalar(top, tok)
		}
	}
}

// push returns a reset frame for the given depth.
func (j *jsonFile) push(depth int) *jframe {
	if depth == len(j.frames) {
		j.frames = append(j.frames, &jframe{})
	}
	f := j.frames[depth]
	*f = jframe{members: f.members[:0], names: nil, rank: -1}
	return f
}

// scalar takes a scalar value; top is nil for a top-level scalar.
func (j *jsonFile) scalar(top *jframe, tok jsonlex.Token) {
	if top == nil {
		return
	}
	if !top.object {
		if top.collect && tok.Kind == jsonlex.String && len(top.names) < maxNames {
			b := tok.Bytes
			if len(b) > maxNameBytes {
				b = b[:maxNameBytes]
			}
			top.names = append(top.names, string(b))
		}
		return
	}
	var v Value
	switch tok.Kind {
	case jsonlex.Number:
		f, err := parseJSONNumber(tok.Bytes)
		if err != nil {
			return
		}
		v = floatValue(f)
	case jsonlex.NaN:
		v = Value{NaN, math.NaN()}
	case jsonlex.PosInf:
		v = Value{PosInf, math.Inf(1)}
	case jsonlex.NegInf:
		v = Value{NegInf, math.Inf(-1)}
	case jsonlex.String:
		if len(tok.Bytes) > 64 {
			return
		}
		v = parseValue(trimBlank(tok.Bytes))
	default:
		return
	}
	if v.Kind == Absent {
		return
	}
	if top.key == "rank" && v.Kind == Finite && v.V >= 0 && v.V < maxRank && v.V == math.Trunc(v.V) {
		top.rank = int(v.V)
	}
	if len(top.members) < maxMembers {
		top.members = append(top.members, jmember{key: top.key, val: v})
	}
}

// endObject emits the record the object at depth holds, if it holds a step
// key. Its rank is its own "rank" member, else the nearest enclosing
// object's, else -1 until the file's rank is known. The "rank" of the
// top-level objects is the file's, unless they disagree.
func (j *jsonFile) endObject(depth int) {
	f := j.frames[depth]
	if depth == 0 && f.rank >= 0 {
		switch {
		case j.fileRank < 0 && !j.rankConflict:
			j.fileRank = f.rank
		case j.fileRank != f.rank:
			j.fileRank, j.rankConflict = -1, true
		}
	}
	i := j.pats.step.pick(f.members)
	if i < 0 {
		return
	}
	sv := f.members[i].val
	if sv.Kind != Finite || sv.V < 0 || sv.V > maxCount || sv.V != math.Trunc(sv.V) {
		if !j.badStep {
			j.badStep = true
			j.warn.add(f.line, "step key %q holds %s, not a step number: record skipped", f.members[i].key, sv)
		}
		return
	}
	rank := f.rank
	for d := depth - 1; d >= 0 && rank < 0; d-- {
		rank = j.frames[d].rank
	}
	rec := Record{File: j.path, Line: f.line, Rank: rank, Iteration: int(sv.V), NonFinite: f.names}
	if k := j.pats.loss.pick(f.members); k >= 0 && k != i {
		rec.Loss = f.members[k].val
	}
	if k := j.pats.grad.pick(f.members); k >= 0 && k != i {
		rec.GradNorm = f.members[k].val
	}
	if k := j.pats.scale.pick(f.members); k >= 0 && k != i {
		rec.LossScale = f.members[k].val
	}
	j.sink.add(pending{rec: rec, nanIters: -1})
}

// isNamesKey reports a key whose list of strings names non-finite things.
func isNamesKey(key string) bool {
	low := strings.ToLower(key)
	return strings.Contains(low, "nonfinite") || strings.Contains(low, "nan")
}

func (j *jsonFile) internKey(b []byte) string {
	if s, ok := j.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(j.intern) < maxInterned && len(b) <= 256 {
		j.intern[s] = s
	}
	return s
}

// lineCounter counts the lines of what it reads, so that a byte offset
// already read can be turned into a line number. Offsets must be asked in
// increasing order; memory holds only the newlines not yet asked about.
type lineCounter struct {
	r    io.Reader
	off  int64   // bytes read
	nl   []int64 // offsets of newlines not yet counted
	line int     // newlines counted
	last byte    // the last byte read
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i := 0; i < n; {
		k := bytes.IndexByte(p[i:n], '\n')
		if k < 0 {
			break
		}
		c.nl = append(c.nl, c.off+int64(i+k))
		i += k + 1
	}
	c.off += int64(n)
	if n > 0 {
		c.last = p[n-1]
	}
	return n, err
}

// lineOf returns the line (from 1) of the byte at offset off.
func (c *lineCounter) lineOf(off int64) int {
	i := 0
	for i < len(c.nl) && c.nl[i] < off {
		i++
	}
	c.line += i
	c.nl = c.nl[i:]
	return c.line + 1
}
