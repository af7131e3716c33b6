package ranklist

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/internal/intranges"
	"github.com/nanhunt/nanhunt/verdict"
)

// MissingWords names the nodes of a join without a summary for people:
// "node 3 of 4 (ranks 6,7)", "nodes 1,2 of 4 (their ranks unknown)", "a
// node whose summary could not be read"; "" for none.
func MissingWords(nodes []verdict.MissingNode) string {
	var indices, ranks []int
	count, unknown, unheaded := 0, false, 0
	for _, n := range nodes {
		if n.Node < 0 {
			unheaded++
			continue
		}
		indices = append(indices, n.Node)
		ranks = append(ranks, n.Ranks...)
		count = max(count, n.Of)
		unknown = unknown || len(n.Ranks) == 0
	}
	var parts []string
	if len(indices) > 0 {
		word, which := "node ", "ranks "+intranges.Format(Unique(ranks))
		switch {
		case len(indices) > 1 && unknown:
			word, which = "nodes ", "their ranks unknown"
		case len(indices) > 1:
			word = "nodes "
		case unknown:
			which = "its ranks unknown"
		}
		parts = append(parts, fmt.Sprintf("%s%s of %d (%s)", word, intranges.Format(Unique(indices)), count, which))
	}
	switch {
	case unheaded == 1:
		parts = append(parts, "a node whose summary could not be read")
	case unheaded > 1:
		parts = append(parts, fmt.Sprintf("%d nodes whose summaries could not be read", unheaded))
	}
	return strings.Join(parts, " and ")
}
