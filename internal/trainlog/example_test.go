package trainlog_test

import (
	"context"
	"fmt"
	"log"

	"github.com/nanhunt/nanhunt/internal/trainlog"
)

// Read two per-rank Megatron-LM logs and print where the first non-finite
// value was printed, in the log's numbering and in msprobe's.
func Example() {
	l, err := trainlog.Read(context.Background(), []string{"testdata/per-rank/rank0.log", "testdata/per-rank/rank1.log"}, trainlog.Options{})
	if err != nil {
		log.Fatal(err)
	}
	s := l.Summary()
	f := s.FirstNonFinite
	fmt.Printf("iteration %d (msprobe step%d, %s): %s %s on ranks %v\n", f.Iteration, f.Step, s.Mapping.Text, f.Metric, f.Kind, f.Ranks)
	for _, r := range s.PerRank {
		fmt.Printf("rank %d: first at iteration %d, last finite %d\n", r.Rank, r.First.Iteration, r.LastFinite.Iteration)
	}
	fmt.Println("stage:", s.StageHint)
	// Output:
	// iteration 4 (msprobe step3, step = iteration - 1): loss inf on ranks [1]
	// rank 0: first at iteration 5, last finite 4
	// rank 1: first at iteration 4, last finite 3
	// stage: forward
}
