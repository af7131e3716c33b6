package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/report"
)

// progressTo returns a progress display on w when w is a terminal, else nil:
// pipes, files and CI logs stay clean.
func progressTo(w io.Writer) func(nanhunt.Progress) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return func(p nanhunt.Progress) {
		if p.Final {
			fmt.Fprint(w, "\r\033[K")
			return
		}
		fmt.Fprint(w, "\r\033[K"+progressLine(p))
	}
}

// progressLine writes one line: step, files, bytes, rate and the time left
// if every file had to be read (the scan usually stops earlier).
func progressLine(p nanhunt.Progress) string {
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = float64(p.BytesRead) / s
	}
	line := fmt.Sprintf("nanhunt: step %d (%d/%d steps done) · %d/%d files · %s of %s · %s/s",
		p.Step, p.StepsDone, p.Steps, p.FilesDone, p.Files, report.Size(p.BytesRead), report.Size(p.Bytes), report.Size(int64(rate)))
	if rate > 0 && p.Bytes > p.BytesRead {
		left := time.Duration(float64(p.Bytes-p.BytesRead) / rate * float64(time.Second))
		line += " · at most " + left.Round(time.Second).String() + " left"
	}
	return line
}
