package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/nanhunt/nanhunt/internal/safeio"
	"github.com/nanhunt/nanhunt/verdict"
)

// evidenceOnly: a verdict built from a training log or the monitor alone.
func evidenceOnly(v *verdict.Verdict) bool {
	return v.Evidence != nil && v.Origin == nil && v.Scanned.Files == 0
}

// evidenceHeadline is the answer when there is no dump.
func (p *printer) evidenceHeadline(v *verdict.Verdict) {
	e := v.Evidence
	verb := "shows"
	if e.Log != nil && e.Monitor != nil {
		verb = "show"
	}
	if !v.Anomaly {
		p.f("nanhunt: no NaN or Inf in the %s.\n\n", sources(e))
		return
	}
	p.f("nanhunt: %s.\n\n", evidenceAnswer(v, verb))
}

// evidenceOverDump reports a verdict whose dump holds no anomaly while the
// log or the monitor shows one.
func evidenceOverDump(v *verdict.Verdict) bool {
	return v.Anomaly && v.Origin == nil && v.Evidence != nil && v.Scanned.Files > 0
}

// evidenceAnswer is the first line of a verdict without a dump: what was
// seen, at which step and iteration, on which ranks, as far as the log and
// the monitor tell.
func evidenceAnswer(v *verdict.Verdict, verb string) string {
	e := v.Evidence
	what, step, iteration, where := "a non-finite value", (*int)(nil), (*int)(nil), ""
	if l := e.Log; l != nil && l.FirstNaNStep != nil {
		what = withArticle(kindWord(l.Kind) + " " + strings.ReplaceAll(l.FirstNaNMetric, "_", " "))
		step, iteration = l.FirstNaNStep, l.FirstNaNIteration
		if len(l.Ranks) > 0 && len(l.Ranks) < len(l.LoggedRanks) {
			where = " on " + rankWord(l.Ranks)
		}
	}
	if m := e.Monitor; m != nil && m.Step != nil && (step == nil || *m.Step <= *step) {
		// the monitor sees inside the step: its first sign is the earlier one
		if step == nil || *m.Step < *step {
			what, iteration = "a non-finite value", nil
		}
		step = m.Step
		if m.Module != "" {
			what = fmt.Sprintf("a non-finite value in %s", m.Module)
			if m.Tensor != "" {
				what += " (" + m.Tensor + ")"
			}
		}
		if len(m.Ranks) > 0 {
			where = " on " + rankWord(m.Ranks)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the %s %s %s", sources(e), verb, what)
	switch {
	case step != nil && iteration != nil && *iteration != *step:
		fmt.Fprintf(&b, " first at iteration %d (dump step %d)", *iteration, *step)
	case step != nil:
		fmt.Fprintf(&b, " first at step %d", *step)
	}
	b.WriteString(where)
	switch {
	case v.Scanned.Files > 0:
		fmt.Fprintf(&b, "; the dump (%s) holds no NaN or Inf, so it does not cover where it began", stepsWord(v.Scanned.Steps))
	case where != "":
		b.WriteString("; without a dump the op that made it is unknown")
	default:
		b.WriteString("; without a dump the op and the rank that made it are unknown")
	}
	return b.String()
}

func sources(e *verdict.Evidence) string {
	var s []string
	if e.Log != nil {
		s = append(s, "training log")
	}
	if e.Monitor != nil {
		s = append(s, "monitor")
	}
	return strings.Join(s, " and ")
}

// evidence prints what the log and the monitor say, and how it fits.
func (p *printer) evidence(v *verdict.Verdict) {
	e := v.Evidence
	if e == nil {
		return
	}
	p.f("Evidence\n")
	if l := e.Log; l != nil {
		switch {
		case l.FirstNaNStep == nil:
			p.f("  log:     no non-finite loss or grad norm (%d %s)\n", l.Files, plural(l.Files, "file", "files"))
		default:
			it := *l.FirstNaNStep
			if l.FirstNaNIteration != nil {
				it = *l.FirstNaNIteration
			}
			p.f("  log:     %s %s first at iteration %d = step %d (%s)", kindWord(l.Kind), strings.ReplaceAll(l.FirstNaNMetric, "_", " "), it, *l.FirstNaNStep, l.Mapping)
			if len(l.Ranks) > 0 && len(l.Ranks) < len(l.LoggedRanks) {
				p.f(", on %s only", rankWord(l.Ranks))
			}
			if l.StageHint != "" {
				p.f("; points at the %s", l.StageHint)
			}
			p.f("\n")
			if l.Where != "" {
				p.f("           %s\n", l.Where)
			}
		}
		for _, s := range l.Skipped {
			p.f("           iteration %d (step %d) skipped by the loss scaler: %s\n", s.Iteration, s.Step, s.Reason)
		}
		if np := l.NonFiniteParams; np != nil {
			p.f("           non-finite parameters after step %d: %s\n", np.Step, strings.Join(np.Params, ", "))
		}
	}
	if m := e.Monitor; m != nil {
		if m.Step == nil {
			p.f("  monitor: no non-finite value recorded\n")
		} else {
			p.f("  monitor: step %d: %s\n", *m.Step, m.Summary)
			if m.Reason != "" {
				p.f("           %s\n", m.Reason)
			}
			if m.Partners != "" {
				p.f("           %s\n", m.Partners)
			}
		}
	}
	for _, a := range e.Agreements {
		p.f("  agrees:  %s\n", a)
	}
	for _, c := range e.Contradictions {
		p.f("  differs: %s\n", c)
	}
	for _, n := range e.Notes {
		p.f("  gap:     %s\n", n)
	}
	p.f("\n")
}

// plan prints what to collect next: all of it when there is no dump yet,
// one line pointing at `nanhunt plan` otherwise.
func (p *printer) plan(v *verdict.Verdict, full bool) {
	pl := v.Plan
	if pl == nil {
		return
	}
	if !full {
		size := ""
		if e := pl.Estimate; e != nil {
			size = sizeWords(e.Total) + "; "
		}
		p.f("Collect next: %s (%snanhunt plan writes its msprobe config.json).\n\n", pl.Collect, size)
		return
	}
	p.f("Collect next\n  %s\n  %s.\n", pl.Why, capital(pl.Collect))
	if pl.Moves != "" {
		p.f("  %s.\n", capital(pl.Moves))
	}
	p.f("\n")
	if pl.Mode != "" {
		p.f("Mode: %s. %s.\n", pl.Mode, capital(pl.Other))
	}
	if e := pl.Estimate; e != nil {
		p.f("Size: %s a rank and step; %s for %d %s × %d %s", sizeWords(e.PerRankStep), sizeWords(e.Total),
			e.Ranks, plural(e.Ranks, "rank", "ranks"), e.Steps, plural(e.Steps, "step", "steps"))
		if e.Budget > 0 {
			p.f(" (budget %s)", safeio.Size(e.Budget))
		}
		p.f(".\n")
	}
	if pl.Mode != "" || pl.Estimate != nil {
		p.f("\n")
	}
	cfg, err := pl.Config.Indented()
	if err != nil {
		p.err = fmt.Errorf("plan config: %w", err)
		return
	}
	p.f("config.json:\n%s\n", cfg)
	if pl.Register != "" {
		p.f("Register before the run (Python):\n%s\n", pl.Register)
	}
	if pl.Watch != "" {
		p.f("While it runs (ends the run at the first lasting anomaly, so the disk holds only the steps up to it):\n  %s\n\n", pl.Watch)
	}
	if len(pl.Then) > 0 {
		p.f("Then:\n")
		for _, t := range pl.Then {
			p.f("  %s\n", t)
		}
		p.f("\n")
	}
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Plan writes the plan of what to collect next in full: why, what, the
// msprobe config.json, the Python lines to register user functions, and
// what to run once it is collected.
func Plan(w io.Writer, v *verdict.Verdict) error {
	p := &printer{w: w}
	p.plan(v, true)
	return p.err
}

func withArticle(s string) string {
	switch {
	case strings.HasPrefix(s, "a ") || strings.HasPrefix(s, "an "):
		return s
	case strings.HasPrefix(s, "Inf") || strings.HasPrefix(s, "-Inf") || strings.HasPrefix(s, "inf"):
		return "an " + s
	}
	return "a " + s
}

// sizeWords writes an estimated size: "≈ 5.8 GiB".
func sizeWords(n int64) string { return "≈ " + safeio.Size(n) }
