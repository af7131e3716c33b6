package sources

import (
	"github.com/nanhunt/nanhunt/internal/ahead"
	"github.com/nanhunt/nanhunt/internal/monitor"
	"github.com/nanhunt/nanhunt/internal/trainlog"
	"github.com/nanhunt/nanhunt/verdict"
)

// Ahead is what the sources warn of before the NaN (README "Heading for
// overflow"): warnings, and notes on series that climb but cannot be
// judged.
type Ahead struct {
	Warnings []verdict.Ahead
	Notes    []string
}

// logAhead are the warnings of a log read with ahead.LogJudge: a grad
// norm before the log's first non-finite value, a loss scale before its
// first non-finite (or left out) loss.
func logAhead(l *trainlog.Log) Ahead {
	s := l.Summary()
	var gradCut, scaleCut *int
	if e := s.FirstNonFinite; e != nil {
		gradCut = &e.Step
	}
	for _, e := range []*trainlog.Event{s.FirstNonFiniteLoss, s.FirstLossLeftOut} {
		if e != nil && (scaleCut == nil || e.Step < *scaleCut) {
			scaleCut = &e.Step
		}
	}
	if lo := s.FirstLossLeftOut; lo != nil && (gradCut == nil || lo.Step < *gradCut) {
		gradCut = &lo.Step
	}
	return Ahead{Warnings: ahead.FromLog(l.Climbs(), gradCut, scaleCut)}
}

// monitorAhead are the warnings of a monitor read with
// ahead.MonitorJudge, before its first non-finite row that is not only
// weak.
func monitorAhead(run *monitor.Run) Ahead {
	f := run.Findings()
	var cut *int
	if f.Found && f.Origin != nil && !f.Origin.Weak {
		step := f.Origin.Step
		cut = &step
	}
	w, notes := ahead.FromMonitor(run.Climbs(), cut, run.Dtypes())
	return Ahead{Warnings: w, Notes: notes}
}

// addAhead adds the sources' warnings to the verdict's (the dump's) and
// their notes to its evidence. A verdict is left as it is when they have
// none.
func addAhead(v *verdict.Verdict, as ...Ahead) {
	var ws [][]verdict.Ahead
	for _, a := range as {
		if len(a.Warnings) > 0 {
			ws = append(ws, a.Warnings)
		}
		if v.Evidence != nil {
			v.Evidence.Notes = append(v.Evidence.Notes, a.Notes...)
		}
	}
	if len(ws) > 0 {
		v.Ahead = ahead.Merge(v.Ahead, ws...)
	}
}
