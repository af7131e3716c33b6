package ranklist

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/intranges"
	"github.com/nanhunt/nanhunt/verdict"
)

// Span is a run of steps whose unread ranks are the same.
type Span struct {
	Steps []int
	Ranks []int
}

// Spans groups unread rank-steps by step (whatever the reasons), then puts
// consecutive rows with the same ranks together, in step order.
func Spans(rows []verdict.UnreadRanks) []Span {
	byStep := map[int][]int{}
	for _, u := range rows {
		byStep[u.Step] = append(byStep[u.Step], u.Ranks...)
	}
	var out []Span
	for _, step := range Keys(byStep) {
		ranks := Unique(byStep[step])
		if n := len(out); n > 0 && slices.Equal(out[n-1].Ranks, ranks) {
			out[n-1].Steps = append(out[n-1].Steps, step)
			continue
		}
		out = append(out, Span{Steps: []int{step}, Ranks: ranks})
	}
	return out
}

// UnreadWords names unread rank-steps for people: "steps 5-7 (ranks 0-3)",
// "step 2 (rank 3), step 4 (ranks 0,1)".
func UnreadWords(rows []verdict.UnreadRanks) string {
	var parts []string
	for _, sp := range Spans(rows) {
		steps := "step " + intranges.Format(sp.Steps)
		if len(sp.Steps) > 1 {
			steps = "steps " + intranges.Format(sp.Steps)
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", steps, Name(sp.Ranks)))
	}
	return strings.Join(parts, ", ")
}

// UnreadAt are the rows of one step.
func UnreadAt(rows []verdict.UnreadRanks, step int) []verdict.UnreadRanks {
	var out []verdict.UnreadRanks
	for _, u := range rows {
		if u.Step == step {
			out = append(out, u)
		}
	}
	return out
}
