package sidefile

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
	"github.com/nanhunt/nanhunt/internal/notation"
)

// Frame is one line of a Python stack as msprobe records it:
// "File {path}, line {n}, in {func}, \n {source}".
type Frame struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Func   string `json:"function"`
	Source string `json:"source,omitempty"`
}

// ParseFrame reads one stack.json line. A line in another shape comes back
// whole in Source.
func ParseFrame(line string) Frame {
	head, src, _ := strings.Cut(line, "\n")
	src = strings.TrimSpace(src)
	rest, ok := strings.CutPrefix(strings.TrimSpace(head), "File ")
	if !ok {
		return Frame{Source: strings.TrimSpace(line)}
	}
	i := strings.LastIndex(rest, ", line ")
	if i < 0 {
		return Frame{Source: strings.TrimSpace(line)}
	}
	f := Frame{File: rest[:i], Source: src}
	rest = rest[i+len(", line "):]
	num, fn, _ := strings.Cut(rest, ", in ")
	f.Line, _ = strconv.Atoi(strings.TrimSpace(num))
	f.Func = strings.TrimSuffix(strings.TrimSpace(fn), ",")
	return f
}

// IsLibrary reports whether a frame belongs to PyTorch, MindSpore, msprobe
// or the Python runtime rather than to the user's training code
// (notation.LibraryFile).
func (f Frame) IsLibrary() bool { return notation.LibraryFile(f.File) }

// UserFrame is the innermost frame outside library code, or nil.
func UserFrame(frames []Frame) *Frame {
	for i := range frames {
		if frames[i].File != "" && !frames[i].IsLibrary() {
			return &frames[i]
		}
	}
	return nil
}

// StackFile is what a stack.json holds for the wanted calls.
type StackFile struct {
	// Frames are the frames of the wanted entry names, innermost first.
	Frames map[string][]Frame
	// Triples counts the members written as one frame [function, file,
	// line] ({"op": ["linear", "forward.py", 123]}), the form the
	// nan-overflow-detection skill documents; msprobe writes lines of text
	// (v1) or [[names], [lines]] (v2).
	Triples int
	// Truncated is set (ErrStackGroupTooLarge) when a stack that also
	// accepted had more names than were kept.
	Truncated error
}

// ReadStacks reads stack.json (format v1 {"name": [lines]} or v2
// {"0": [[names], [lines]]}) and returns the frames, innermost first, of
// the wanted entry names. Backward entries have no stack of their own: ask
// for Name.ForwardName.
func ReadStacks(r io.Reader, want map[string]bool) (map[string][]Frame, error) {
	sf, err := ReadStackFile(r, want)
	return sf.Frames, err
}

// ReadStackFile is ReadStacks, and also says in which form the file is
// written.
func ReadStackFile(r io.Reader, want map[string]bool) (StackFile, error) {
	return readStackFile(r, want, nil)
}

// ReadStacksWhere is ReadStacks that also keeps the frames of every name
// whose stack also accepts (the last stack written for a name decides;
// with also nil it is ReadStacks). It
// asks once per stack: names that share one stack (v2) are decided
// together. It lets a caller find, say, the optimizer's calls among tens
// of thousands without naming them all.
func ReadStacksWhere(r io.Reader, want map[string]bool, also func([]Frame) bool) (map[string][]Frame, error) {
	sf, err := readStackFile(r, want, also)
	if err == nil {
		err = sf.Truncated
	}
	return sf.Frames, err
}

func readStackFile(r io.Reader, want map[string]bool, also func([]Frame) bool) (StackFile, error) {
	lx := sideLexer(r)
	defer sideLexers.Put(lx)
	// sized for every wanted name at once: the tail of a forward-only file
	// asks for tens of thousands
	sf := StackFile{Frames: make(map[string][]Frame, min(len(want), 1<<16))}
	out := sf.Frames
	tok, err := lx.Next()
	if err != nil {
		return sf, stackErr(lx, err)
	}
	if tok.Kind != jsonlex.ObjectStart {
		return sf, fmt.Errorf("stack.json: starts with %v, want an object", tok.Kind)
	}
	var names nameList
	var lines []string
	for {
		tok, err := lx.Next()
		if err != nil {
			return sf, stackErr(lx, err)
		}
		if tok.Kind == jsonlex.ObjectEnd {
			return sf, nil
		}
		names.reset()
		names.add(tok.Bytes) // the key: the name in v1
		lines = lines[:0]
		triple, err := readStackValue(lx, want, also != nil, &names, &lines)
		if err != nil {
			return sf, stackErr(lx, err)
		}
		if triple != nil {
			sf.Triples++
			keepFrames(out, &names, want, also, func() []Frame { return []Frame{*triple} })
			continue
		}
		if len(lines) == 0 {
			continue
		}
		accepted := keepFrames(out, &names, want, also, func() []Frame {
			frames := make([]Frame, len(lines))
			for i, l := range lines {
				frames[i] = ParseFrame(l)
			}
			return frames
		})
		if accepted && names.truncated && sf.Truncated == nil {
			sf.Truncated = fmt.Errorf("stack.json: offset %d: %w", lx.InputOffset(), ErrStackGroupTooLarge)
		}
	}
}

// ErrStackGroupTooLarge says that a stack asked about was shared by more
// than maxGroupNames names: only that many were kept beside the wanted
// ones.
var ErrStackGroupTooLarge = fmt.Errorf("a stack shared by more than %d names: only the first %d and the calls asked for were kept", maxGroupNames, maxGroupNames)

// keepFrames records the frames of the names of one stack that are wanted,
// or of all of them when also accepts the stack; a name whose earlier stack
// was accepted and this one is not loses it. The frames are read once, and
// only when they are kept or also asks.
func keepFrames(out map[string][]Frame, names *nameList, want map[string]bool, also func([]Frame) bool, read func() []Frame) (accepted bool) {
	var frames []Frame
	if also != nil {
		frames = read()
		accepted = also(frames)
	}
	for i := range names.ends {
		n := names.at(i)
		switch {
		case accepted || wanted(want, n):
			if frames == nil {
				frames = read()
			}
			out[jsonlex.Text(n)] = frames
		case also != nil && len(out) > 0:
			if utf8.Valid(n) {
				delete(out, string(n))
			} else {
				delete(out, jsonlex.Text(n))
			}
		}
	}
	return accepted
}

// nameList holds the names of one stack as bytes: only the names kept
// become strings. A stack shared by more names than maxGroupNames keeps
// only the wanted ones past that (truncated says so): its memory does not
// grow with the group.
type nameList struct {
	buf       []byte
	ends      []int
	truncated bool
}

// maxGroupNames bounds the names of one stack (stack.json v2) kept beside
// the wanted ones, for a caller that asks about every name of a stack.
const maxGroupNames = 1 << 16

func (l *nameList) reset() { l.buf, l.ends, l.truncated = l.buf[:0], l.ends[:0], false }

// keep adds a name of a v2 stack when it is wanted, or when every name
// may be asked about (all) and the list is not full.
func (l *nameList) keep(name []byte, wanted, all bool) {
	switch {
	case wanted:
		l.add(name)
	case all && len(l.ends) < maxGroupNames:
		l.add(name)
	case all:
		l.truncated = true
	}
}

func (l *nameList) add(b []byte) {
	l.buf = append(l.buf, b...)
	l.ends = append(l.ends, len(l.buf))
}

func (l *nameList) at(i int) []byte {
	from := 0
	if i > 0 {
		from = l.ends[i-1]
	}
	return l.buf[from:l.ends[i]]
}

// wanted reports want[jsonlex.Text(name)] without making a string of a name
// that is valid UTF-8.
func wanted(want map[string]bool, name []byte) bool {
	if len(want) == 0 {
		return false
	}
	if utf8.Valid(name) {
		return want[string(name)]
	}
	return want[jsonlex.Text(name)]
}

// readStackValue reads one member's value: v1 a list of lines (the key is
// the name), v2 a pair [names, lines], or the skill's [function, file,
// line], which comes back as triple (its function and file set only when
// the name is wanted). Lines are kept only when a name is wanted, or all is
// set.
func readStackValue(lx *jsonlex.Lexer, want map[string]bool, all bool, names *nameList, lines *[]string) (triple *Frame, err error) {
	tok, err := lx.Next()
	if err != nil {
		return nil, err
	}
	if tok.Kind != jsonlex.ArrayStart {
		if tok.Kind == jsonlex.ObjectStart {
			return nil, skipContainer(lx)
		}
		return nil, nil
	}
	tok, err = lx.Next()
	if err != nil {
		return nil, err
	}
	switch tok.Kind {
	case jsonlex.ArrayEnd:
		return nil, nil
	case jsonlex.String: // v1, or [function, file, line]: the key is the name
		return readLineList(lx, tok, all || wanted(want, names.at(0)), lines)
	case jsonlex.ArrayStart: // v2: [names], [lines]
		names.reset()
		isWanted := false
		for {
			tok, err := lx.Next()
			if err != nil {
				return nil, err
			}
			if tok.Kind == jsonlex.ArrayEnd {
				break
			}
			if tok.Kind == jsonlex.String {
				w := wanted(want, tok.Bytes)
				isWanted = isWanted || w
				names.keep(tok.Bytes, w, all)
			} else if tok.Kind == jsonlex.ObjectStart || tok.Kind == jsonlex.ArrayStart {
				if err := skipContainer(lx); err != nil {
					return nil, err
				}
			}
		}
		tok, err := lx.Next()
		if err != nil {
			return nil, err
		}
		if tok.Kind == jsonlex.ArrayStart {
			first, err := lx.Next()
			if err != nil {
				return nil, err
			}
			if first.Kind != jsonlex.ArrayEnd {
				if err := readStrings(lx, first, all || isWanted, lines); err != nil {
					return nil, err
				}
			}
			tok, err = lx.Next()
			if err != nil {
				return nil, err
			}
		}
		for tok.Kind != jsonlex.ArrayEnd {
			if tok.Kind == jsonlex.ObjectStart || tok.Kind == jsonlex.ArrayStart {
				if err := skipContainer(lx); err != nil {
					return nil, err
				}
			}
			if tok, err = lx.Next(); err != nil {
				return nil, err
			}
		}
		return nil, nil
	case jsonlex.ObjectStart:
		if err := skipContainer(lx); err != nil {
			return nil, err
		}
	}
	return nil, skipContainer(lx)
}

// readLineList reads a v1 list whose first item, a string, is first,
// through its closing bracket: the lines of a stack, kept when keep is
// set, or exactly a string, a string and an integer, the skill's
// [function, file, line], returned as one frame.
func readLineList(lx *jsonlex.Lexer, first jsonlex.Token, keep bool, lines *[]string) (*Frame, error) {
	start := len(*lines)
	var f Frame
	items, strs := 0, 0 // strs: the leading items that are strings
	line, lineOK := 0, false
	for tok := first; tok.Kind != jsonlex.ArrayEnd; items++ {
		switch tok.Kind {
		case jsonlex.String:
			if keep {
				*lines = append(*lines, string(tok.Bytes))
			}
			if strs == items {
				strs++
			}
		case jsonlex.Number:
			if items == 2 {
				line, lineOK = notation.Counter(string(tok.Bytes))
			}
		case jsonlex.ObjectStart, jsonlex.ArrayStart:
			if err := skipContainer(lx); err != nil {
				return nil, err
			}
		}
		var err error
		if tok, err = lx.Next(); err != nil {
			return nil, err
		}
	}
	if items != 3 || strs != 2 || !lineOK {
		return nil, nil
	}
	if keep {
		f.Func, f.File = (*lines)[start], (*lines)[start+1]
	}
	f.Line = line
	*lines = (*lines)[:start]
	return &f, nil
}

// readStrings reads the strings of an array whose first token is first,
// through its closing bracket.
func readStrings(lx *jsonlex.Lexer, first jsonlex.Token, keep bool, out *[]string) error {
	tok := first
	for {
		switch tok.Kind {
		case jsonlex.ArrayEnd:
			return nil
		case jsonlex.String:
			if keep {
				*out = append(*out, string(tok.Bytes))
			}
		case jsonlex.ObjectStart, jsonlex.ArrayStart:
			if err := skipContainer(lx); err != nil {
				return err
			}
		}
		var err error
		if tok, err = lx.Next(); err != nil {
			return err
		}
	}
}

// skipContainer skips to the end of the container just opened.
func skipContainer(lx *jsonlex.Lexer) error {
	depth := lx.Depth()
	for lx.Depth() >= depth {
		if _, err := lx.Next(); err != nil {
			return err
		}
	}
	return nil
}

func stackErr(lx *jsonlex.Lexer, err error) error {
	return fmt.Errorf("offset %d: %w", lx.InputOffset(), err)
}
