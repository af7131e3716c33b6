package report

import (
	"strings"

	"github.com/nanhunt/nanhunt/verdict"
)

// onRanks is " on rank 1", or "" when the source named no rank (a log
// printed by one rank without saying which).
func onRanks(ranks []int) string {
	if len(ranks) == 0 {
		return ""
	}
	return " on " + rankWord(ranks)
}

// maxAhead bounds the warnings the text shows; the JSON holds them all.
const maxAhead = 10

// ahead prints the statistics heading for overflow, most urgent first:
// the call, tensor and statistic, the series, the limit and when it gets
// there, and where the call is made.
func (p *printer) ahead(v *verdict.Verdict) {
	if len(v.Ahead) == 0 {
		return
	}
	p.f("Heading for overflow\n")
	for i, a := range v.Ahead {
		if i == maxAhead {
			p.f("  ... %d more (see --format json)\n", len(v.Ahead)-i)
			break
		}
		switch a.Source {
		case "log":
			p.f("  log: %s%s: %s\n", strings.ReplaceAll(a.Stat, "_", " "), onRanks(a.Ranks), a.SeriesText())
		case "monitor":
			p.f("  monitor: %s (%s) %s%s: %s\n", a.Op, a.Tensor, a.Stat, onRanks(a.Ranks), a.SeriesText())
		default:
			p.f("  %s %s %s on %s: %s\n", a.Op, a.Tensor, a.Stat, rankWord(a.Ranks), a.SeriesText())
		}
		p.f("    %s; at %s it gets there %s\n", a.LimitReason, a.PaceText(), a.WhenText())
		if len(a.Module) > 0 {
			p.f("    %-7s %s\n", "module", strings.Join(a.Module, " > "))
		}
		if c := a.Code; c != nil {
			p.f("    %-7s %s:%d in %s\n", "code", c.File, c.Line, c.Func)
		}
	}
	p.f("\n")
}
