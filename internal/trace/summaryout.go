package trace

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/safeio"
)

// CheckTarget refuses, before anything is written, a summary that would
// replace one of another run, node, dump folder or selection at
// opt.Target (see checkTarget). The dump is read only when the target
// holds a summary, under ctx.
func CheckTarget(ctx context.Context, opt SummaryOptions) error {
	if opt.Target == "" || !IsSummary(opt.Target) {
		return nil
	}
	sm, h, err := newSummarizer(ctx, opt, io.Discard)
	if err != nil {
		return err
	}
	sm.a.ahead.stop()
	return checkTarget(opt.Target, h)
}

// checkTarget refuses to write a summary over a file that holds another
// one: a summary of another run, node, dump folder or selection of steps
// (two nodes, two jobs or the two phases given the same file). A summary
// of the same ones, a run made again, is replaced; a file that is no
// summary is left to the caller's checks.
func checkTarget(target string, h *summaryHeader) error {
	if target == "" || !IsSummary(target) {
		return nil
	}
	old, err := readHeader(target)
	if err != nil {
		return fmt.Errorf("%s holds a summary whose header cannot be read (%w): it is not written over; remove it, or write to another -o", target, err)
	}
	if sameSummary(old, h) {
		return nil
	}
	return fmt.Errorf("%s holds the summary of %s: it is not written over by the summary of %s; remove it, or write to another -o",
		target, summaryWhat(old), summaryWhat(h))
}

// sameSummary reports whether two headers describe the same summary: the
// same run, node, dump folder, steps and phase.
func sameSummary(a, b *summaryHeader) bool {
	return a.Run == b.Run && a.DumpPath == b.DumpPath && a.Node.Index == b.Node.Index &&
		slices.Equal(a.Steps, b.Steps) && a.Details == b.Details
}

// summaryWhat names a summary for people.
func summaryWhat(h *summaryHeader) string {
	node := "no node index"
	if h.Node.Index >= 0 {
		node = fmt.Sprintf("node %d", h.Node.Index)
	}
	steps := "all steps"
	if len(h.Steps) > 0 {
		steps = "steps " + notation.FormatRanges(h.Steps)
	}
	phase := ""
	if !h.Details {
		phase = ", --until-first"
	}
	return fmt.Sprintf("run %q (%s, %s, %s%s)", h.Run, node, string(h.DumpPath), steps, phase)
}

// readHeader reads the header line of a summary.
func readHeader(path string) (*summaryHeader, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := &lineReader{br: bufio.NewReaderSize(f, 64<<10)}
	b, err := lr.next()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var l lightLine
	if err := unmarshalLine(b, &l); err != nil {
		return nil, err
	}
	if l.Header == nil {
		return nil, errors.New("its first line is no header")
	}
	return l.Header, nil
}
