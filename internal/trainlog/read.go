package trainlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// readOpts are the checked Options.
type readOpts struct {
	format     string
	patterns   Patterns
	text       textPatterns
	offset     *int
	keepFinite int
	ahead      AheadJudge
}

func checkOptions(opt Options) (readOpts, error) {
	ro := readOpts{format: strings.ToLower(strings.TrimSpace(opt.Format)), patterns: opt.Patterns, offset: opt.StepOffset, ahead: opt.Ahead}
	switch ro.format {
	case "":
		ro.format = FormatAuto
	case FormatAuto, FormatMegatron, FormatDeepSpeed, FormatJSON, FormatGeneric:
	default:
		return ro, fmt.Errorf("unknown format %q: want auto, megatron, deepspeed, json or generic", opt.Format)
	}
	if ro.offset != nil && (*ro.offset > maxCount || *ro.offset < -maxCount) {
		return ro, fmt.Errorf("step offset %d is out of range", *ro.offset)
	}
	t, err := compilePatterns(opt.Patterns)
	if err != nil {
		return ro, err
	}
	ro.text = t
	switch {
	case opt.KeepFinite == 0:
		ro.keepFinite = defaultKeepFinite
	case opt.KeepFinite > 0:
		ro.keepFinite = opt.KeepFinite
	}
	return ro, nil
}

// Read reads the training logs at paths (plain or gzip) and returns what
// they say. The error is non-nil only for bad options, when no file could
// be opened, when nothing was recognised in any file, or when ctx is done
// before the read finished (the file being read stops at its next read of
// the disk; the error wraps ctx's); problems with one file are Warnings.
func Read(ctx context.Context, paths []string, opt Options) (*Log, error) {
	ro, err := checkOptions(opt)
	if err != nil {
		return nil, fmt.Errorf("trainlog: %w", err)
	}
	if len(paths) == 0 {
		return nil, errors.New("trainlog: no file given")
	}
	l := &Log{}
	var aggs []*rankAgg
	opened, recognised := 0, 0
	var firstErr error
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("trainlog: %w", err)
		}
		res, err := readFile(ctx, path, &ro)
		l.Warnings = append(l.Warnings, res.warnings...)
		l.Files = append(l.Files, res.file)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			l.Warnings = append(l.Warnings, Warning{File: path, Message: err.Error()})
			continue
		}
		opened++
		if res.sink == nil {
			continue
		}
		recognised++
		l.Records = append(l.Records, res.sink.recs...)
		rs := make([]int, 0, len(res.sink.ranks))
		for r := range res.sink.ranks {
			rs = append(rs, r)
		}
		slices.Sort(rs)
		for _, r := range rs {
			aggs = append(aggs, res.sink.ranks[r])
			l.climbs = append(l.climbs, res.sink.ranks[r].climbs()...)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("trainlog: %w", err)
	}
	if opened == 0 {
		return nil, fmt.Errorf("trainlog: no file could be read: %w", firstErr)
	}
	if recognised == 0 {
		return nil, fmt.Errorf("trainlog: no training-log lines recognised in %s (give step/loss/grad_norm patterns for other formats)", fileList(l.Files))
	}
	l.Mapping = sharedMapping(l)
	l.summary = summarize(aggs, l.Mapping)
	return l, nil
}

// fileList names up to three files.
func fileList(fs []File) string {
	var names []string
	for i, f := range fs {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(fs)-3))
			break
		}
		names = append(names, f.Path)
	}
	return strings.Join(names, ", ")
}

// sharedMapping returns the mapping of the files holding records, warning
// when they differ.
func sharedMapping(l *Log) Mapping {
	var m *Mapping
	for i := range l.Files {
		f := &l.Files[i]
		if f.Format == "" || f.Records == 0 {
			continue
		}
		if m == nil {
			m = &f.Mapping
			continue
		}
		if f.Mapping.Offset != m.Offset {
			l.Warnings = append(l.Warnings, Warning{File: f.Path, Message: fmt.Sprintf(
				"this file uses %q (%s) but %q uses %q (%s); give a step offset to use one mapping",
				f.Mapping.Text, f.Mapping.Source, l.Files[0].Path, m.Text, m.Source)})
		}
	}
	if m == nil {
		return l.Files[0].Mapping
	}
	return *m
}

// fileResult is what reading one file gives.
type fileResult struct {
	file     File
	sink     *sink // nil if nothing was recognised
	warnings []Warning
}

// readFile reads one file, until ctx is done. The error is non-nil only
// when it cannot be opened.
func readFile(ctx context.Context, path string, ro *readOpts) (fileResult, error) {
	res := fileResult{file: File{Path: path, Rank: rankFromPath(path)}}
	res.file.Mapping = mappingFor("", ro.offset)
	in, err := openInput(ctx, path)
	if err != nil {
		return res, fmt.Errorf("cannot open: %w", err)
	}
	defer in.Close()
	w := &fileWarnings{path: path}
	nameRank := res.file.Rank

	var format string
	var s *sink
	switch mode := sniff(in.br, ro.format); mode {
	case modeJSONDoc, modeJSONLines:
		s = newSink(path, ro.keepFinite, ro.ahead)
		j := newJSONFile(path, ro.patterns, w, s)
		if mode == modeJSONDoc {
			j.readDoc(in.br)
		} else {
			j.readLines(&lineReader{br: in.br, max: maxJSONLine})
		}
		res.file.Lines = j.lines
		s.finish()
		rank := j.fileRank
		if rank < 0 {
			rank = nameRank
		}
		s.relabel(rank)
		if s.n == 0 {
			w.add(0, "no JSON object holds a step key (%s)", describeKeys(ro.patterns))
			s = nil
		} else {
			format = FormatJSON
			if j.fileRank >= 0 {
				res.file.Rank = j.fileRank
			}
		}
	default:
		t := &textFile{path: path, nameRank: nameRank, format: ro.format, pats: ro.text, warn: w,
			structured: newSink(path, ro.keepFinite, ro.ahead), generic: newSink(path, ro.keepFinite, ro.ahead),
			ds: map[int]*dsState{}, gen: map[int]*genericState{}}
		t.read(&lineReader{br: in.br, max: maxTextLine})
		res.file.Lines = t.lines
		t.structured.finish()
		t.generic.finish()
		format, s = t.result()
		if s == nil {
			w.add(0, "no training-log line recognised%s", hintFor(ro))
		}
	}
	if s != nil {
		res.file.Format = format
		res.file.Mapping = mappingFor(format, ro.offset)
		res.file.Records = s.n
		res.file.Dropped = s.dropped
		s.setOffset(res.file.Mapping.Offset)
		if rs := s.rankList(); len(rs) == 1 {
			res.file.Rank = rs[0]
		} else if len(rs) > 1 {
			res.file.Rank = -1
			res.file.Ranks = rs
		}
		res.sink = s
	}
	res.warnings = w.done()
	return res, nil
}

func hintFor(ro *readOpts) string {
	if ro.text.any() {
		return ", and the patterns matched nothing"
	}
	return " (Megatron-LM, DeepSpeed or JSON); give step/loss/grad_norm patterns for other formats"
}

func describeKeys(p Patterns) string {
	if p.Step != "" {
		return fmt.Sprintf("step pattern %q", p.Step)
	}
	return "step, iteration, iter or global_step"
}

// The ways a file is read.
const (
	modeText = iota
	modeJSONDoc
	modeJSONLines
)

// peeker is the part of bufio.Reader sniff needs.
type peeker interface {
	Peek(n int) ([]byte, error)
}

// sniff tells JSON from text by the start of the file. A file whose first
// non-blank byte is '{' (but not a Python dict "{'") is JSON; one starting
// with '[' is JSON when its first line is valid JSON so far (a timestamp
// such as "[2024-05-01 ...]" is not). JSON whose first line is a complete
// value is read as JSON Lines, else as one document.
func sniff(p peeker, format string) int {
	switch format {
	case FormatMegatron, FormatDeepSpeed:
		return modeText
	}
	head, _ := p.Peek(bufSize)
	i := 0
	for i < len(head) && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r') {
		i++
	}
	if i == len(head) || (head[i] != '{' && head[i] != '[') {
		if format == FormatJSON {
			return modeJSONDoc
		}
		return modeText
	}
	rest := bytes.TrimLeft(head[i+1:], " \t")
	if head[i] == '{' && len(rest) > 0 && rest[0] == '\'' && format != FormatJSON {
		return modeText
	}
	first := head[i:]
	complete := false
	if k := bytes.IndexByte(first, '\n'); k >= 0 {
		first = first[:k]
		complete = true
	} else if len(head) < bufSize {
		complete = true // the whole file is one line
	}
	lx := jsonlex.New(bytes.NewReader(first), jsonlex.Options{WindowSize: 4096})
	for {
		tok, err := lx.Next()
		if err == nil && tok.Kind == jsonlex.EOF {
			return modeJSONLines
		}
		if err == nil {
			continue
		}
		var se *jsonlex.SyntaxError
		if (errors.As(err, &se) && se.Truncated) || !complete || head[i] == '{' || format == FormatJSON {
			return modeJSONDoc
		}
		return modeText
	}
}
