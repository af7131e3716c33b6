package dump

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
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
// or the Python runtime rather than to the user's training code.
func (f Frame) IsLibrary() bool {
	p := strings.ReplaceAll(f.File, "\\", "/")
	for _, s := range []string{
		"/msprobe/", "/torch/", "/torch_npu/", "/mindspore/", "/mindtorch/", "/hook_module/",
		"/multiprocessing/", "/threading.py", "/runpy.py", "/concurrent/", "/contextlib.py", "<frozen",
	} {
		if strings.Contains(p, s) {
			return true
		}
	}
	if i := strings.Index(p, "/lib/python"); i >= 0 {
		rest := p[i:]
		if !strings.Contains(rest, "-packages/") {
			return true // the standard library
		}
	}
	return strings.HasPrefix(p, "msprobe/") || strings.HasPrefix(p, "torch/")
}

// UserFrame is the innermost frame outside library code, or nil.
func UserFrame(frames []Frame) *Frame {
	for i := range frames {
		if frames[i].File != "" && !frames[i].IsLibrary() {
			return &frames[i]
		}
	}
	return nil
}

// ReadStacks reads stack.json (format v1 {"name": [lines]} or v2
// {"0": [[names], [lines]]}) and returns the frames, innermost first, of
// the wanted entry names. Backward entries have no stack of their own: ask
// for Name.ForwardName.
func ReadStacks(r io.Reader, want map[string]bool) (map[string][]Frame, error) {
	lx := jsonlex.New(r, jsonlex.Options{MaxDepth: 64})
	out := map[string][]Frame{}
	tok, err := lx.Next()
	if err != nil {
		return out, stackErr(lx, err)
	}
	if tok.Kind != jsonlex.ObjectStart {
		return out, fmt.Errorf("stack.json: starts with %v, want an object", tok.Kind)
	}
	var names, lines []string
	for {
		tok, err := lx.Next()
		if err != nil {
			return out, stackErr(lx, err)
		}
		if tok.Kind == jsonlex.ObjectEnd {
			return out, nil
		}
		key := string(tok.Bytes)
		names, lines = names[:0], lines[:0]
		if err := readStackValue(lx, want, key, &names, &lines); err != nil {
			return out, stackErr(lx, err)
		}
		if len(lines) == 0 {
			continue
		}
		var frames []Frame
		for _, n := range names {
			if want[n] {
				if frames == nil {
					frames = make([]Frame, len(lines))
					for i, l := range lines {
						frames[i] = ParseFrame(l)
					}
				}
				out[n] = frames
			}
		}
	}
}

// readStackValue reads one member's value: v1 a list of lines (the key is
// the name), v2 a pair [names, lines]. Lines are kept only when a name is
// wanted.
func readStackValue(lx *jsonlex.Lexer, want map[string]bool, key string, names, lines *[]string) error {
	tok, err := lx.Next()
	if err != nil {
		return err
	}
	if tok.Kind != jsonlex.ArrayStart {
		if tok.Kind == jsonlex.ObjectStart {
			return skipContainer(lx)
		}
		return nil
	}
	tok, err = lx.Next()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonlex.ArrayEnd:
		return nil
	case jsonlex.String: // v1
		*names = append(*names, key)
		return readStrings(lx, tok, want[key], lines)
	case jsonlex.ArrayStart: // v2: [names], [lines]
		wanted := false
		for {
			tok, err := lx.Next()
			if err != nil {
				return err
			}
			if tok.Kind == jsonlex.ArrayEnd {
				break
			}
			if tok.Kind == jsonlex.String {
				n := string(tok.Bytes)
				*names = append(*names, n)
				wanted = wanted || want[n]
			} else if tok.Kind == jsonlex.ObjectStart || tok.Kind == jsonlex.ArrayStart {
				if err := skipContainer(lx); err != nil {
					return err
				}
			}
		}
		tok, err := lx.Next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonlex.ArrayStart {
			first, err := lx.Next()
			if err != nil {
				return err
			}
			if first.Kind != jsonlex.ArrayEnd {
				if err := readStrings(lx, first, wanted, lines); err != nil {
					return err
				}
			}
			tok, err = lx.Next()
			if err != nil {
				return err
			}
		}
		for tok.Kind != jsonlex.ArrayEnd {
			if tok.Kind == jsonlex.ObjectStart || tok.Kind == jsonlex.ArrayStart {
				if err := skipContainer(lx); err != nil {
					return err
				}
			}
			if tok, err = lx.Next(); err != nil {
				return err
			}
		}
		return nil
	case jsonlex.ObjectStart:
		if err := skipContainer(lx); err != nil {
			return err
		}
	}
	return skipContainer(lx)
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
