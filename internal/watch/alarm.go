package watch

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/internal/sources"
	"github.com/nanhunt/nanhunt/verdict"
)

// planOptions shape the follow-up as Options.Plan says, sized from the
// dump watched unless it says how.
func (w *watcher) planOptions() plan.Options {
	popt := w.opt.Plan
	if popt.Measure == nil {
		popt.Measure = plan.FromDump(w.opt.Path)
	}
	return popt
}

// finishDumpAlarm completes the verdict of an alarm the dump shows: its
// plan, what the followed log and monitor said next to it (the evidence
// section a trace with --log and --monitor has), and the sidecars that
// could not be read.
func (w *watcher) finishDumpAlarm(v *verdict.Verdict) {
	v.Plan = plan.Make(v, w.planOptions())
	if rs := w.readings(); len(rs) > 0 {
		sources.CombineReadings(v, w.planOptions(), rs...)
	}
	v.Warnings = append(v.Warnings, w.failureWarnings()...)
}

// readings are the last reads of the followed log and monitor.
func (w *watcher) readings() []sources.Reading {
	var rs []sources.Reading
	for _, sc := range w.opt.Sidecars {
		if r, ok := sc.(reader); ok {
			rs = append(rs, r.Last())
		}
	}
	return rs
}

// sidecarFindings completes the verdict of an alarm that only a sidecar
// shows (e: its step, source and what the dump holds of that step) with
// what the sidecars said and what to dump, and says which ranks and what
// kind of value the source shows, and the alarm in words.
func (w *watcher) sidecarFindings(v *verdict.Verdict, e Event) (*verdict.Verdict, []int, string, string) {
	v = sources.CombineReadings(v, w.planOptions(), w.readings()...)
	var le *verdict.LogEvidence
	var me *verdict.MonitorEvidence
	if v.Evidence != nil {
		le, me = v.Evidence.Log, v.Evidence.Monitor
	}
	what, kind, ranks := sidecarWhat(e.Source, le, me)
	msg := sidecarWords(e, what)
	v.NextSteps = append([]string{"The" + strings.TrimPrefix(msg, "the") + "."}, v.NextSteps...)
	v.Warnings = append(v.Warnings, w.failureWarnings()...)
	return v, ranks, kind, msg
}

// sidecarWhat is what a sidecar showed, in words ("NaN"), its kind
// ("nan", "" when not told) and the ranks it names.
func sidecarWhat(source string, le *verdict.LogEvidence, me *verdict.MonitorEvidence) (string, string, []int) {
	switch {
	case source == "log" && le != nil:
		if w := kindWords[le.Kind]; w != "" {
			return w, le.Kind, le.Ranks
		}
		return "a non-finite value", le.Kind, le.Ranks
	case source == "monitor" && me != nil:
		return "a non-finite value", "", me.Ranks
	}
	return "a non-finite value", "", nil
}

var kindWords = map[string]string{"nan": "NaN", "inf": "Inf"}

// sidecarWords says what the sidecar saw and what the dump holds of that
// step: "the log shows NaN at step 2; the dump stops at step 1: dump step
// 2".
func sidecarWords(e Event, what string) string {
	head := fmt.Sprintf("the %s shows %s at step %d", e.Source, what, e.Step)
	switch {
	case e.LastDumped == nil:
		return fmt.Sprintf("%s; no step of the dump was checked: dump step %d", head, e.Step)
	case e.Status == "" && *e.LastDumped < e.Step:
		return fmt.Sprintf("%s; the dump stops at step %d: dump step %d", head, *e.LastDumped, e.Step)
	case e.Status == "":
		return fmt.Sprintf("%s; the dump has no step %d (it was checked up to step %d): dump step %d", head, e.Step, *e.LastDumped, e.Step)
	case e.Status == StatusClean:
		return fmt.Sprintf("%s; the dump's step %d and the next show none: check how the %s numbers steps, and which ranks are dumped", head, e.Step, e.Source)
	case e.Status == "recovered":
		return fmt.Sprintf("%s; the dump's anomaly at step %d did not last", head, e.Step)
	}
	return fmt.Sprintf("%s; the dump's step %d could not be read whole", head, e.Step)
}
