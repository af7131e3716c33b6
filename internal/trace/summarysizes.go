package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/nanhunt/nanhunt/internal/callsize"
	"github.com/nanhunt/nanhunt/internal/safeio"
)

// SummarySizes sizes, from summaries, what the calls of some ops save on
// one rank at one step, the way plan.Measure does on the dump: the summary
// of that rank-step measured them when it was made. It returns the sizes
// by op and the dump.json they were measured in. The summaries are those
// a join read (it checked their run and rules); only the record asked for
// is decoded.
func SummarySizes(files []string) func(step, rank int, ops []string) (map[string]callsize.Sizes, string, error) {
	return func(step, rank int, ops []string) (map[string]callsize.Sizes, string, error) {
		r, err := findRecord(files, step, rank)
		if err != nil {
			return nil, "", err
		}
		d := r.Details
		switch {
		case d == nil:
			return nil, string(r.Dump), fmt.Errorf("the summary of rank %d at step %d holds no details", rank, step)
		case d.SizesErr != "":
			return nil, string(r.Dump), errors.New(d.SizesErr)
		}
		out := map[string]callsize.Sizes{}
		for _, op := range ops {
			c, ok := d.Sizes[op]
			if !ok {
				return nil, string(r.Dump), fmt.Errorf("the summary of rank %d at step %d does not size %s", rank, step, op)
			}
			out[op] = c
		}
		return out, string(r.Dump), nil
	}
}

// findRecord reads the first record of one rank-step in the summaries.
func findRecord(files []string, step, rank int) (*record, error) {
	lr := &lineReader{br: bufio.NewReaderSize(nil, 64<<10)}
	for _, name := range files {
		r, err := findRecordIn(lr, name, step, rank)
		if err != nil || r != nil {
			return r, err
		}
	}
	return nil, fmt.Errorf("no summary of rank %d at step %d", rank, step)
}

// findRecordIn looks for the record of a rank-step in one summary, telling
// the lines apart by their first members: a record's step and rank come
// first, so the others are not decoded.
func findRecordIn(lr *lineReader, name string, step, rank int) (*record, error) {
	f, err := safeio.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr.br.Reset(f)
	root := ""
	for line, offset := 1, int64(0); ; line++ {
		b, err := lr.next()
		if err == io.EOF && len(b) == 0 {
			return nil, nil
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: offset %d: %w", name, offset, err)
		}
		at := offset
		offset += int64(len(b))
		if line == 1 {
			var l lightLine
			if err := unmarshalLine(b, &l); err != nil || l.Header == nil {
				return nil, fmt.Errorf("%s: offset 0: not a nanhunt summary", name)
			}
			root = string(l.Header.DumpPath)
			continue
		}
		s, r, sure := recordStepRank(b)
		if sure && (s != step || r != rank) {
			continue
		}
		rec, err := decodeRecord(bytes.Clone(b), root)
		switch {
		case err != nil && sure:
			return nil, fmt.Errorf("%s: offset %d: %w", name, at, err)
		case err != nil || rec.Step != step || rec.Rank != rank:
			continue // another line, or damage the join warned about
		}
		return rec, nil
	}
}

// recordStepRank reads the step and rank of a record line without
// decoding the rest: sure is set when the line is one object whose only
// member is "record", whose step and rank are integers written once.
// Otherwise the line must be decoded to be told.
func recordStepRank(b []byte) (step, rank int, sure bool) {
	d := jsontext.NewDecoder(bytes.NewReader(b))
	for _, want := range []jsontext.Kind{'{', '"', '{'} {
		t, err := d.ReadToken()
		if err != nil || t.Kind() != want || (want == '"' && t.String() != "record") {
			return 0, 0, false
		}
	}
	var haveStep, haveRank bool
	for {
		t, err := d.ReadToken()
		if err != nil {
			return 0, 0, false
		}
		if t.Kind() == '}' {
			break
		}
		name := t.String() // t is void after the next read
		if name != "step" && name != "rank" {
			if d.SkipValue() != nil {
				return 0, 0, false
			}
			continue
		}
		have := &haveStep
		if name == "rank" {
			have = &haveRank
		}
		v, err := d.ReadToken()
		if err != nil || v.Kind() != '0' || *have {
			return 0, 0, false
		}
		n, err := v.Int()
		if err != nil || int64(int(n)) != n {
			return 0, 0, false
		}
		if name == "step" {
			step = int(n)
		} else {
			rank = int(n)
		}
		*have = true
	}
	if t, err := d.ReadToken(); err != nil || t.Kind() != '}' || !haveStep || !haveRank {
		return 0, 0, false
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return 0, 0, false
	}
	return step, rank, true
}
