package main

import (
	"fmt"
	"strconv"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/report"
	"github.com/nanhunt/nanhunt/internal/watch"
)

// aheadWarning prints a statistic heading for overflow, the first step it
// qualifies ("step 12: heading for overflow: Distributed.all_reduce.28.forward
// output.0 max …"; a warning event with "ahead" in jsonl), and runs
// --on-warning. Neither it nor a failure of the hook changes the exit
// status.
func (p *watchPrinter) aheadWarning(e nanhunt.WatchEvent, line *watchLine) {
	line.Ahead, line.Message = e.Ahead, e.Message
	out := p.cmd.OutOrStdout()
	if p.f.format == "jsonl" {
		p.writeJSON(out, *line)
	} else {
		fmt.Fprintf(out, "step %d: heading for overflow: %s\n", e.Step, report.Printable(e.Ahead.Text))
	}
	if p.f.onWarning == "" {
		return
	}
	if err := runHook(p.cmd.Context(), "--on-warning", p.f.onWarning, warningEnv(watch.Event(e), p.dump)); err != nil {
		fmt.Fprintf(p.cmd.ErrOrStderr(), "nanhunt: warning: %v (the watch goes on)\n", err)
	}
}

// warningEnv is a warning in the --on-warning hook's environment. The
// names from the dump (op, tensor, the text) are written as the text
// report writes them (report.Printable), as for --on-anomaly.
func warningEnv(e watch.Event, dumpPath string) []string {
	a := e.Ahead
	return []string{
		fmt.Sprintf("NANHUNT_STEP=%d", e.Step), "NANHUNT_RANKS=" + notation.FormatRanges(a.Ranks),
		"NANHUNT_OP=" + report.Printable(a.Op), "NANHUNT_TENSOR=" + report.Printable(a.Tensor),
		"NANHUNT_STAT=" + report.Printable(a.Stat), "NANHUNT_DTYPE=" + report.Printable(a.Dtype),
		"NANHUNT_LIMIT=" + strconv.FormatFloat(a.Limit, 'g', -1, 64),
		"NANHUNT_STEPS_LEFT=" + strconv.FormatFloat(a.StepsLeft, 'f', 2, 64),
		"NANHUNT_TEXT=" + report.Printable(a.Text),
		"NANHUNT_SOURCE=" + a.Source, "NANHUNT_DUMP=" + dumpPath,
	}
}
