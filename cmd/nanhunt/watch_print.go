package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/internal/report"
	"github.com/nanhunt/nanhunt/internal/watch"
	"github.com/nanhunt/nanhunt/verdict"
)

// watchPrinter writes the watch's events: a line each in text, one JSON
// object each in jsonl; at the alarm, the verdict files and the hook.
type watchPrinter struct {
	cmd     *cobra.Command
	f       *watchFlags
	dump    string
	outDir  string
	waited  map[int]bool // steps whose waiting line was printed
	alarmed bool         // the alarm was raised
	err     error        // the first failure to write or run the hook
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
	// Complete and Unread: step, anomaly and stopped events (README
	// "How it decides", 9)
	Complete *bool                 `json:"complete,omitempty"`
	Unread   []verdict.UnreadRanks `json:"unread,omitempty"`
	// step: rank-steps whose folders appeared after the watch had passed
	// the step, read then
	Late bool `json:"late,omitempty"`
	// an alarm a sidecar alone raised: the last dump step checked, and
	// the alarm in words
	LastDumped *int   `json:"last_dump_step,omitempty"`
	Message    string `json:"message,omitempty"`
	// NotWritten: anomaly: the files of the alarm that could not be
	// written (Verdict and HTML name only those that were)
	NotWritten []string `json:"not_written,omitempty"`
	// Ahead: warning: the statistic heading for overflow (verdict's
	// "ahead" entry), judged at Step
	Ahead *verdict.Ahead `json:"ahead,omitempty"`
}

func (p *watchPrinter) event(e nanhunt.WatchEvent) {
	out := p.cmd.OutOrStdout()
	line := watchLine{Event: e.Kind, Time: e.At.Format(time.RFC3339Nano), Source: e.Source, Reason: e.Reason, Status: e.Status}
	if e.Kind != watch.EventStopped {
		step := e.Step
		line.Step = &step
	}
	text := ""
	switch e.Kind {
	case watch.EventStep:
		line.Ranks = notation.FormatRanges(e.Ranks)
		if e.Status != watch.StatusAfterAlarm { // listed, not read
			line.Complete, line.Unread = completeOf(e)
		}
		line.Late = e.Late
		text = stepWords(e)
	case watch.EventWaiting:
		line.Missing = notation.FormatRanges(e.Missing)
		if p.waited == nil {
			p.waited = map[int]bool{}
		}
		// a step that some ranks finished and others not: worth a line,
		// once (a step that no rank finished yet is just being written)
		if !p.waited[e.Step] && len(e.Missing) < len(e.Known) {
			p.waited[e.Step] = true
			text = fmt.Sprintf("step %d: waiting for %s (judged without %s if the step does not move on for %s)", e.Step, ranklist.Name(e.Missing),
				map[bool]string{true: "it", false: "them"}[len(e.Missing) == 1], p.rankTimeout())
		}
	case watch.EventSuspect:
		if o := e.Verdict.Origin; o != nil {
			line.Ranks, line.Op, line.Kind, line.Stage = o.Ranks, o.Op, o.Kind, o.Stage
		}
		text = fmt.Sprintf("step %d: %s; reading the next dumped step to see whether it lasts", e.Step, suspectWords(e))
	case watch.EventEvidence:
		text = fmt.Sprintf("the %s shows a non-finite value at step %d", e.Source, e.Step)
	case watch.EventWarning:
		if e.Ahead != nil {
			p.aheadWarning(e, &line)
			return
		}
		line.Step, line.Message = nil, e.Message
		text = "warning: " + e.Message + " (read again when it grows)"
	case watch.EventRecovered:
		text = fmt.Sprintf("step %d: did not last (the next dumped step no longer shows it: an overflow the loss scaler skipped, or a dropped batch)", e.Step)
	case watch.EventAnomaly:
		p.alarmed = true
		line.Complete, line.Unread = completeOf(e)
		if e.Verdict.Origin == nil {
			p.sidecarAlarm(e, &line)
		} else {
			p.alarm(e, &line)
		}
		return
	case watch.EventStopped:
		line.Complete, line.Unread = completeOf(e)
		text = "stopped: " + map[string]string{"idle": "the folder stopped changing", "until-step": "--until-step reached",
			"interrupted": "interrupted", "anomaly": "the alarm"}[e.Reason]
		if !e.Complete && !p.alarmed {
			text += "\n" + incompleteWords(e.Unread)
		}
	}
	if p.f.format == "jsonl" {
		p.writeJSON(out, line)
	} else if text != "" {
		fmt.Fprintln(out, text)
	}
}

// rankTimeout is --rank-timeout as the watch applies it.
func (p *watchPrinter) rankTimeout() time.Duration {
	if p.f.rankTimeout > 0 {
		return p.f.rankTimeout
	}
	return watch.DefaultRankTimeouts * p.f.settle
}

// completeOf is an event's complete and unread, for jsonl.
func completeOf(e nanhunt.WatchEvent) (*bool, []verdict.UnreadRanks) {
	complete := e.Complete
	return &complete, e.Unread
}

// stepWords is the line of a step checked: "step 1: clean (ranks 0-3)",
// "step 2 incomplete: rank 3 never wrote it (ranks 0-2 clean)", "step 5:
// could not be read (ranks 0-3: unreadable)".
func stepWords(e nanhunt.WatchEvent) string {
	if e.Late {
		return lateWords(e)
	}
	switch e.Status {
	case watch.StatusIncomplete:
		var parts []string
		for _, u := range e.Unread {
			parts = append(parts, ranklist.Name(u.Ranks)+" "+unreadVerb(u.Reason, len(u.Ranks)))
		}
		return fmt.Sprintf("step %d incomplete: %s (%s clean)", e.Step, strings.Join(parts, "; "), ranklist.Name(e.Ranks))
	case watch.StatusUnread:
		var parts []string
		for _, u := range e.Unread {
			parts = append(parts, ranklist.Name(u.Ranks)+": "+u.Reason)
		}
		return fmt.Sprintf("step %d: could not be read (%s)", e.Step, strings.Join(parts, "; "))
	}
	return fmt.Sprintf("step %d: %s (%s)", e.Step, e.Status, ranklist.Name(e.Ranks))
}

// lateWords says what the rank-steps read after the watch had passed
// their step held (ranks first seen then, or a step folder that appeared
// after later ones).
func lateWords(e nanhunt.WatchEvent) string {
	var ranks []int
	for _, u := range e.Unread {
		ranks = append(ranks, u.Ranks...)
	}
	ranks = append(ranks, e.Ranks...)
	slices.Sort(ranks)
	text := fmt.Sprintf("step %d: %s read late (folders that appeared after the watch had passed the step): ", e.Step, ranklist.Name(ranks))
	if e.Status == watch.StatusClean {
		return text + "clean"
	}
	var parts []string
	for _, u := range e.Unread {
		parts = append(parts, ranklist.Name(u.Ranks)+" "+unreadVerb(u.Reason, len(u.Ranks)))
	}
	return text + strings.Join(parts, "; ")
}

// unreadVerb says why n ranks of a step were not read whole.
func unreadVerb(reason string, n int) string {
	one := n == 1
	switch reason {
	case watch.ReasonNeverFinished:
		return "never wrote it"
	case "no folder":
		return map[bool]string{true: "has no folder for it", false: "have no folder for it"}[one]
	case "unreadable":
		return "could not be read"
	case "damaged":
		return map[bool]string{true: "is damaged (read up to the damage)", false: "are damaged (read up to the damage)"}[one]
	}
	return reason
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

// alarm writes the verdict and the page of an anomaly the dump shows,
// prints them and runs the hook.
func (p *watchPrinter) alarm(e nanhunt.WatchEvent, line *watchLine) {
	o := e.Verdict.Origin
	line.Ranks, line.Op, line.Kind, line.Stage = o.Ranks, o.Op, o.Kind, o.Stage
	p.raise(e, line, fmt.Sprintf("step %d: ANOMALY, first seen by the %s", o.Step, e.Source),
		alarmEnv{ranks: o.Ranks, op: o.Op, kind: o.Kind, stage: o.Stage})
}

// sidecarAlarm is the alarm of an anomaly that only the log or the
// monitor shows: its verdict holds what they say and what to dump.
func (p *watchPrinter) sidecarAlarm(e nanhunt.WatchEvent, line *watchLine) {
	line.Ranks, line.Kind, line.LastDumped, line.Message = e.Ranks, e.NonFinite, e.LastDumped, e.Message
	line.Status = ""
	p.raise(e, line, fmt.Sprintf("step %d: ANOMALY, first seen by the %s: %s", e.Step, e.Source, e.Message), alarmEnv{ranks: e.Ranks, kind: e.NonFinite})
}

// alarmEnv is what the hook's environment says of the alarm.
type alarmEnv struct {
	ranks           []int
	op, kind, stage string
}

// raise writes the verdict and the page of an alarm, prints them (after
// the headline, in text) and runs the hook. Each file is written or fails
// on its own, and neither failure keeps the alarm from being printed nor
// the hook from running; what was not written is named on stderr at once
// and named nowhere else.
func (p *watchPrinter) raise(e nanhunt.WatchEvent, line *watchLine, headline string, a alarmEnv) {
	v := e.Verdict
	files := p.writeAlarm(e.Step, v)
	line.Verdict, line.HTML, line.NotWritten = files.verdict, files.html, files.notWritten
	for name := range e.Seen {
		line.Seen = append(line.Seen, name)
	}
	sort.Strings(line.Seen)
	out := p.cmd.OutOrStdout()
	if p.f.format == "jsonl" {
		p.writeJSON(out, *line)
	} else {
		fmt.Fprintf(out, "%s\n\n", headline)
		p.fail(report.Text(out, v))
		if files.verdict != "" {
			fmt.Fprintf(out, "verdict: %s\n", files.verdict)
		}
		if files.html != "" {
			fmt.Fprintf(out, "report:  %s\n", files.html)
		}
	}
	if p.f.onAnomaly != "" {
		p.alarmFailed(runHook(p.cmd.Context(), "--on-anomaly", p.f.onAnomaly, hookEnv(e, a, files, p.dump)))
	}
}

// alarmFiles are the files of an alarm: those written, and those that
// could not be.
type alarmFiles struct {
	verdict, html string // "" when not written
	notWritten    []string
}

// writeAlarm writes the verdict and the page of the alarm at step into the
// output folder, each on its own (through a temporary file: a failed one
// leaves nothing).
func (p *watchPrinter) writeAlarm(step int, v *verdict.Verdict) alarmFiles {
	var files alarmFiles
	jsonPath := filepath.Join(p.outDir, fmt.Sprintf("verdict-step%d.json", step))
	htmlPath := filepath.Join(p.outDir, fmt.Sprintf("report-step%d.html", step))
	if p.alarmFile(jsonPath, func(w io.Writer) error { return report.JSON(w, v) }) {
		files.verdict = jsonPath
	} else {
		files.notWritten = append(files.notWritten, jsonPath)
	}
	if p.alarmFile(htmlPath, func(w io.Writer) error { return htmlReport(w, v) }) {
		files.html = htmlPath
	} else {
		files.notWritten = append(files.notWritten, htmlPath)
	}
	return files
}

// alarmFile writes one file of the alarm, and says whether it was.
func (p *watchPrinter) alarmFile(path string, write func(io.Writer) error) bool {
	err := os.MkdirAll(p.outDir, 0o755) // made at the start; removed meanwhile, made again
	if err == nil {
		err = outguard.WriteFile(path, write)
	}
	if err != nil {
		p.alarmFailed(fmt.Errorf("-o %s was not written: %w", path, err))
		return false
	}
	return true
}

// alarmFailed names on stderr, at once, something of the alarm that
// failed: the alarm stands (exit status 1), and a watch that goes on after
// it must not keep the failure to its end.
func (p *watchPrinter) alarmFailed(err error) {
	if err != nil {
		writeError(p.cmd.ErrOrStderr(), err)
	}
}

// hookEnv is the alarm in the --on-anomaly hook's environment. The names
// from the dump (op, kind, stage) are written as the text report writes
// them (report.Printable: control characters, DEL, C1 controls,
// reordering marks and bytes that are not UTF-8 as escapes), so that the
// hook runs whatever they hold (an environment cannot carry a NUL) and a
// script reading them meets no control character. A file of the alarm
// that was not written is "".
func hookEnv(e nanhunt.WatchEvent, a alarmEnv, files alarmFiles, dumpPath string) []string {
	return []string{
		fmt.Sprintf("NANHUNT_STEP=%d", e.Step), "NANHUNT_RANKS=" + notation.FormatRanges(a.ranks),
		"NANHUNT_OP=" + report.Printable(a.op), "NANHUNT_KIND=" + report.Printable(a.kind), "NANHUNT_STAGE=" + report.Printable(a.stage),
		"NANHUNT_VERDICT=" + files.verdict, "NANHUNT_HTML=" + files.html,
		"NANHUNT_SOURCE=" + e.Source, "NANHUNT_DUMP=" + dumpPath,
	}
}

func (p *watchPrinter) fail(err error) {
	if err != nil && p.err == nil {
		p.err = err
	}
}

// suspectWords says what a step's own check found.
func suspectWords(e nanhunt.WatchEvent) string {
	if v := e.Verdict; v != nil && v.Origin != nil {
		kind := map[string]string{"nan": "NaN", "inf": "Inf"}[v.Origin.Kind]
		if kind == "" {
			kind = v.Origin.Kind
		}
		return report.Printable(fmt.Sprintf("%s on %s at %s", kind, ranklist.Name(v.Origin.Ranks), v.Origin.Op))
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

// incompleteWords is the last line of a watch that stopped without an
// alarm, not complete: the rank-steps it could not read whole, and the
// steps it was stopped before it checked.
func incompleteWords(rows []verdict.UnreadRanks) string {
	var unread, unchecked []verdict.UnreadRanks
	for _, u := range rows {
		if u.Reason == watch.ReasonNotChecked {
			unchecked = append(unchecked, u)
		} else {
			unread = append(unread, u)
		}
	}
	var parts []string
	if len(unread) > 0 {
		parts = append(parts, ranklist.UnreadWords(unread)+" could not be read whole")
	}
	if len(unchecked) > 0 {
		parts = append(parts, "the watch stopped before it checked "+ranklist.UnreadWords(unchecked))
	}
	return "no NaN or Inf in what could be read, but " + strings.Join(parts, ", and ") + ": not a clean run (exit status 3)"
}
