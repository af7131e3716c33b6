package trace

import (
	"fmt"

	"github.com/nanhunt/nanhunt/internal/dumplayout"
)

// A summary is untrusted input: it travels, and can be edited by hand.
// What the join reads of it is bounded by what summarize writes, so that
// no number in it makes the join loop or allocate without end.

// checkHeader refuses a header that summarize cannot have written: a node
// index or count beyond MaxNodes (the join counts the missing nodes one by
// one), a rank folder whose step or rank is no folder number.
func checkHeader(h *summaryHeader) error {
	n := h.Node
	switch {
	case n.Index < -1 || n.Index >= MaxNodes:
		return fmt.Errorf("node index %d: a summary names a node from 0 to %d, or -1 (none)", n.Index, MaxNodes-1)
	case n.Count < 0 || n.Count > MaxNodes:
		return fmt.Errorf("node count %d: a summary names a count from 1 to %d, or 0 (none)", n.Count, MaxNodes)
	}
	for _, d := range h.Dirs {
		if err := checkStepRank(d.Step, d.Rank); err != nil {
			return fmt.Errorf("rank folder %q: %w", string(d.Dir), err)
		}
	}
	return nil
}

// checkStepRank refuses a step or rank that is no folder number.
func checkStepRank(step, rank int) error {
	switch {
	case step < 0 || step > dumplayout.MaxFolderNumber:
		return fmt.Errorf("step %d: a step folder's number is from 0 to %d", step, dumplayout.MaxFolderNumber)
	case rank < 0 || rank > dumplayout.MaxFolderNumber:
		return fmt.Errorf("rank %d: a rank folder's number is from 0 to %d", rank, dumplayout.MaxFolderNumber)
	}
	return nil
}
