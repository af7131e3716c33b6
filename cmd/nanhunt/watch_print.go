package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/report"
	"github.com/nanhunt/nanhunt/plan"
	"github.com/nanhunt/nanhunt/watch"
)

// watchPrinter writes the watch's events: a line each in text, one JSON
// object each in jsonl; at the alarm, the verdict files and the hook.
type watchPrinter struct {
	cmd    *cobra.Command
	f      *watchFlags
	dump   string
	outDir string
	waited map[int]bool // steps whose waiting line was printed
	err    error        // the first failure to write or run the hook
}

// watchLine is one event in jsonl.
type watchLine struct {
	Event   string   `json:"event"`
	Time    string   `json:"time"`
	Step    *int     `json:"step,omitempty"`
	Status  string   `json:"status,omitempty"`
	Ranks   any      `json:"ranks,omitempty"`
	Missing string   `json:"missing,omitempty"`
	Op      string   `json:"op,omitempty"`
	Kind    string   `json:"kind,omitempty"`
	Stage   string   `json:"stage,omitempty"`
	Verdict string   `json:"verdict,omitempty"`
	HTML    string   `json:"html,omitempty"`
	Source  string   `json:"source,omitempty"`
	Seen    []string `json:"seen_by,omitempty"`
	Reason  string   `json:"reason,omitempty"`
}

func (p *watchPrinter) event(e watch.Event) {
	out := p.cmd.OutOrStdout()
	line := watchLine{Event: e.Kind, Time: e.At.Format(time.RFC3339Nano), Source: e.Source, Reason: e.Reason, Status: e.Status}
	if e.Kind != watch.EventStopped {
		step := e.Step
		line.Step = &step
	}
	text := ""
	switch e.Kind {
	case watch.EventStep:
		line.Ranks = dump.FormatRanges(e.Ranks)
		text = fmt.Sprintf("step %d: %s (%s)", e.Step, e.Status, rankWords(e.Ranks))
	case watch.EventWaiting:
		line.Missing = dump.FormatRanges(e.Missing)
		if p.waited == nil {
			p.waited = map[int]bool{}
		}
		// a step that some ranks finished and others not: worth a line,
		// once (a step that no rank finished yet is just being written)
		if !p.waited[e.Step] && len(e.Missing) < len(e.Known) {
			p.waited[e.Step] = true
			text = fmt.Sprintf("step %d: waiting for %s", e.Step, rankWords(e.Missing))
		}
	case watch.EventSuspect:
		if o := e.Verdict.Origin; o != nil {
			line.Ranks, line.Op, line.Kind, line.Stage = o.Ranks, o.Op, o.Kind, o.Stage
		}
		text = fmt.Sprintf("step %d: %s; reading the next dumped step to see whether it lasts", e.Step, suspectWords(e))
	case watch.EventEvidence:
		text = fmt.Sprintf("the %s shows a non-finite value at step %d", e.Source, e.Step)
	case watch.EventRecovered:
		text = fmt.Sprintf("step %d: did not last (the next dumped step no longer shows it: an overflow the loss scaler skipped, or a dropped batch)", e.Step)
	case watch.EventAnomaly:
		p.alarm(e, &line)
		return
	case watch.EventStopped:
		text = "stopped: " + map[string]string{"idle": "the folder stopped changing", "until-step": "--until-step reached",
			"interrupted": "interrupted", "anomaly": "the alarm"}[e.Reason]
	}
	if p.f.format == "jsonl" {
		p.writeJSON(out, line)
	} else if text != "" {
		fmt.Fprintln(out, text)
	}
}

func (p *watchPrinter) writeJSON(w io.Writer, line watchLine) {
	b, err := json.Marshal(line)
	if err == nil {
		_, err = fmt.Fprintf(w, "%s\n", b)
	}
	if err != nil && p.err == nil {
		p.err = err
	}
}

// alarm writes the verdict and the page, prints them and runs the hook.
func (p *watchPrinter) alarm(e watch.Event, line *watchLine) {
	v := e.Verdict
	v.Plan = plan.Make(v, plan.Options{Measure: plan.FromDump(p.dump)})
	o := v.Origin
	jsonPath := filepath.Join(p.outDir, fmt.Sprintf("verdict-step%d.json", o.Step))
	htmlPath := filepath.Join(p.outDir, fmt.Sprintf("report-step%d.html", o.Step))
	if err := os.MkdirAll(p.outDir, 0o755); err != nil {
		p.fail(err)
	} else {
		p.fail(outguard.WriteFile(jsonPath, func(w io.Writer) error { return report.JSON(w, v) }))
		p.fail(writeHTMLReport(htmlPath, v, p.dump))
	}
	line.Ranks, line.Op, line.Kind, line.Stage = o.Ranks, o.Op, o.Kind, o.Stage
	line.Verdict, line.HTML = jsonPath, htmlPath
	for name := range e.Seen {
		line.Seen = append(line.Seen, name)
	}
	sort.Strings(line.Seen)
	out := p.cmd.OutOrStdout()
	if p.f.format == "jsonl" {
		p.writeJSON(out, *line)
	} else {
		fmt.Fprintf(out, "step %d: ANOMALY, first seen by the %s\n\n", o.Step, e.Source)
		p.fail(report.Text(out, v))
		fmt.Fprintf(out, "verdict: %s\nreport:  %s\n", jsonPath, htmlPath)
	}
	if p.f.onAnomaly != "" {
		env := []string{
			fmt.Sprintf("NANHUNT_STEP=%d", o.Step), "NANHUNT_RANKS=" + dump.FormatRanges(o.Ranks), "NANHUNT_OP=" + o.Op,
			"NANHUNT_KIND=" + o.Kind, "NANHUNT_STAGE=" + o.Stage, "NANHUNT_VERDICT=" + jsonPath, "NANHUNT_HTML=" + htmlPath,
			"NANHUNT_SOURCE=" + e.Source, "NANHUNT_DUMP=" + p.dump,
		}
		p.fail(runHook(p.cmd.Context(), p.f.onAnomaly, env))
	}
}

func (p *watchPrinter) fail(err error) {
	if err != nil && p.err == nil {
		p.err = err
	}
}

func rankWords(ranks []int) string {
	if len(ranks) == 1 {
		return "rank " + dump.FormatRanges(ranks)
	}
	return "ranks " + dump.FormatRanges(ranks)
}

// suspectWords says what a step's own check found.
func suspectWords(e watch.Event) string {
	if v := e.Verdict; v != nil && v.Origin != nil {
		kind := map[string]string{"nan": "NaN", "inf": "Inf"}[v.Origin.Kind]
		if kind == "" {
			kind = v.Origin.Kind
		}
		return fmt.Sprintf("%s on %s at %s", kind, rankWords(v.Origin.Ranks), v.Origin.Op)
	}
	return "an anomaly"
}

// lowerPriority makes the watch yield to training.
func lowerPriority(nice int) {
	if nice > 0 {
		syscall.Setpriority(syscall.PRIO_PROCESS, 0, nice) // best effort
	}
}

func shellCommand(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, "/bin/sh", "-c", command)
}
