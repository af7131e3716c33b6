package report

import (
	"testing"

	"github.com/nanhunt/nanhunt/verdict"
)

// The first line of a verdict without a dump carries the step, the
// iteration and the ranks whenever the log or the monitor tells them.
func TestEvidenceAnswer(t *testing.T) {
	ip := func(n int) *int { return &n }
	log := &verdict.LogEvidence{FirstNaNIteration: ip(6), FirstNaNStep: ip(5), FirstNaNMetric: "loss", Kind: "nan", LoggedRanks: []int{0, 1, 2, 3}}
	oneRank := *log
	oneRank.Ranks = []int{2}
	gradInf := &verdict.LogEvidence{FirstNaNIteration: ip(7), FirstNaNStep: ip(7), FirstNaNMetric: "grad_norm", Kind: "inf"}
	mon := &verdict.MonitorEvidence{Step: ip(4), Ranks: []int{1}, Module: "0.self_attention.dense", Tensor: "output_0"}
	tests := []struct {
		name string
		e    verdict.Evidence
		verb string
		want string
	}{
		{"log", verdict.Evidence{Log: log}, "shows",
			"the training log shows a NaN loss first at iteration 6 (dump step 5); without a dump the op and the rank that made it are unknown"},
		{"log, one rank", verdict.Evidence{Log: &oneRank}, "shows",
			"the training log shows a NaN loss first at iteration 6 (dump step 5) on rank 2; without a dump the op that made it is unknown"},
		{"log, iteration = step", verdict.Evidence{Log: gradInf}, "shows",
			"the training log shows an Inf grad norm first at step 7; without a dump the op and the rank that made it are unknown"},
		{"monitor", verdict.Evidence{Monitor: mon}, "shows",
			"the monitor shows a non-finite value in 0.self_attention.dense (output_0) first at step 4 on rank 1; without a dump the op that made it is unknown"},
		{"both: the monitor sees it earlier", verdict.Evidence{Log: log, Monitor: mon}, "show",
			"the training log and monitor show a non-finite value in 0.self_attention.dense (output_0) first at step 4 on rank 1; without a dump the op that made it is unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := evidenceAnswer(&verdict.Verdict{Evidence: &tt.e}, tt.verb); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
