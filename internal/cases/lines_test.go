package cases_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/reference"
)

// verdictLines is a verdict as a case file's "verdict" section writes it:
// one field a line, lists in a fixed order, so that two verdicts agree
// when their lines do. A refused input is the one line "error".
func verdictLines(v *reference.Verdict, err error) []string {
	if err != nil {
		return []string{"error"}
	}
	out := []string{fmt.Sprintf("anomaly: %v", v.Anomaly)}
	if o := v.Origin; o != nil {
		out = append(out,
			fmt.Sprintf("origin: step %d ranks %v op %s", o.Step, o.Ranks, o.Op),
			fmt.Sprintf("origin: stage %s phase %s kind %s", o.Stage, o.Phase, o.Kind),
			fmt.Sprintf("origin: tie %v captured %v collective %v unread %v", o.Tie, o.Captured, o.Collective, o.Unread),
			"origin: confidence "+o.Confidence)
	}
	if f := v.FirstNaN; f != nil {
		out = append(out, fmt.Sprintf("first_nan: step %d rank %d op %s", f.Step, f.Rank, f.Op))
	}
	if v.Carrier != nil {
		out = append(out, "carrier: "+hopLine(*v.Carrier))
	}
	var spread []string
	for _, h := range v.Spread {
		spread = append(spread, "spread: "+hopLine(h))
	}
	slices.Sort(spread)
	out = append(out, spread...)
	for _, r := range v.Recovered {
		out = append(out, fmt.Sprintf("recovered: step %d ranks %v op %s stage %s kind %s next %d", r.Step, r.Ranks, r.Op, r.Stage, r.Kind, r.NextStep))
	}
	for _, s := range v.Steps {
		out = append(out, fmt.Sprintf("step %d: %s", s.Step, s.Status))
		rows := slices.Clone(s.Anomalous)
		slices.SortFunc(rows, func(a, b reference.RankRole) int { return a.Rank - b.Rank })
		for _, r := range rows {
			out = append(out, fmt.Sprintf("step %d rank %d: %s %s %s %s/%s", s.Step, r.Rank, r.Role, r.Kind, r.Op, r.Stage, r.Phase))
		}
	}
	sc := v.Scanned
	out = append(out, fmt.Sprintf("scanned: steps %v stopped_at %s checked_next %s not_scanned %v", sc.Steps, intPtr(sc.StoppedAt), intPtr(sc.CheckedNext), sc.NotScanned),
		fmt.Sprintf("complete: %v", v.Complete))
	var unread []string
	for _, u := range v.Unread {
		for _, r := range u.Ranks {
			unread = append(unread, fmt.Sprintf("unread: step %d rank %d: %s", u.Step, r, u.Reason))
		}
	}
	slices.Sort(unread)
	out = append(out, unread...)
	return append(out, fmt.Sprintf("not_dumped: %v", v.NotDumped))
}

func hopLine(h reference.Hop) string {
	return fmt.Sprintf("step %d op %s from %v to %v", h.Step, h.Op, h.FromRanks, h.ToRanks)
}

func intPtr(p *int) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

// lineDiff lists the lines of want missing from got and those of got
// that want does not have, in order.
func lineDiff(want, got []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			out = append(out, "- "+w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			out = append(out, "+ "+g)
		}
	}
	if len(out) == 0 && !slices.Equal(want, got) {
		out = append(out, "same lines in another order:\n"+strings.Join(got, "\n"))
	}
	return out
}
