package report

import (
	"strings"

	"github.com/nanhunt/nanhunt/verdict"
)

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
		p.f("  %s %s %s on %s: %s\n", a.Op, a.Tensor, a.Stat, rankWord(a.Ranks), a.SeriesText())
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
