package evidence

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/monitor"
)

// FromMonitor reduces what msprobe's monitor recorded to the
// verdict's evidence.monitor; the reader's full findings ride along.
func FromMonitor(r *monitor.Run) *verdict.MonitorEvidence {
	f := r.Findings()
	e := &verdict.MonitorEvidence{Ranks: []int{}, SeenOn: []int{}, Recorded: ranklist.Unique(f.Ranks), Findings: f}
	o := f.Origin
	if !f.Found || o == nil {
		e.Summary = fmt.Sprintf("no NaN or Inf in %d rows of %d files", f.RowsRead, f.FilesRead)
		return e
	}
	step := o.Step
	e.Step, e.Stage = &step, o.Stage
	e.Module = o.Row.Name
	if o.Row.Tensor != "" {
		e.Module += "." + o.Row.Tensor
	}
	var seen []int
	switch o.Source {
	case "forward", "backward":
		a := f.Forward
		e.Tensor = "activation"
		if o.Source == "backward" {
			a, e.Tensor = f.Backward, "activation gradient"
		}
		if a != nil {
			seen = a.RanksAnomalous
			if a.Partners != nil {
				e.Partners = a.Partners.Reason
			}
		}
	case "gradients":
		e.Tensor = "weight gradient"
		if g := f.Gradients; g != nil {
			for _, side := range []*monitor.GradSide{g.Before, g.After} {
				if side != nil {
					seen = append(seen, side.RanksAnomalous...)
				}
			}
			switch g.Where {
			case monitor.GradBeforeReduction:
				e.Reduction = "before"
			case monitor.GradAfterReduction:
				e.Reduction = "after"
			}
		}
	case "optimizer":
		e.Tensor = "optimizer state or updated weight (" + o.Row.Source + ")"
		if op := f.Optimizer; op != nil {
			for _, side := range []*monitor.OptSide{op.State, op.Updated, op.Origin} {
				if side != nil {
					seen = append(seen, side.RanksAnomalous...)
				}
			}
		}
	default:
		e.Tensor = o.Source
	}
	e.SeenOn = ranklist.Unique(seen)
	if e.Reduction != "after" {
		e.Ranks = ranklist.Unique(o.Ranks)
	}
	// every rank whose first anomalous row is in the same module at that
	// step may be the source: a collective inside the module (tensor
	// parallelism) makes them look alike at module granularity
	for _, a := range []*monitor.Activations{f.Forward, f.Backward} {
		if a == nil || a.Step != step || a.First.Source != o.Row.Source {
			continue
		}
		for _, pr := range a.PerRank {
			if pr.First.Name == o.Row.Name && pr.First.MicroStep == o.Row.MicroStep {
				e.Ranks = append(e.Ranks, pr.Rank)
			}
		}
		e.Ranks = ranklist.Unique(e.Ranks)
	}
	kind := o.Row.Kind
	if kind == "" {
		kind = "non-finite"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s in the %s %s", kind, e.Tensor, e.Module)
	if len(e.Ranks) > 0 {
		fmt.Fprintf(&b, " on %s", ranklist.Name(e.Ranks))
	}
	if e.Stage != "" {
		fmt.Fprintf(&b, " (%s)", e.Stage)
	}
	e.Reason = o.Reason
	if o.Weak {
		e.Weak = true
		b.WriteString(" [weak: only an infinite norm or a nan statistic without a NaN counted]")
	}
	e.Summary = b.String()
	return e
}
