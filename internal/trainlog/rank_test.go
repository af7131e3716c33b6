package trainlog

import "testing"

func TestRankFromPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want int
	}{
		{"logs/rank3.log", 3}, {"logs/rank_3.log", 3}, {"logs/rank-3.txt", 3}, {"train-rank12.log.gz", 12},
		{"job-rank3.out", 3}, {"worker7.log", 7}, {"RANK2.json", 2}, {"logs/rank5/train.log", 5},
		{"torchrun/attempt_0/4/stdout.log", 4}, {"frank3.log", -1}, {"train.log", -1}, {"ranking.log", -1},
		{"rank99999999.log", -1}, {"logs/3/train.log", -1},
	} {
		if got := rankFromPath(tc.path); got != tc.want {
			t.Errorf("rankFromPath(%q) = %d, want %d", tc.path, got, tc.want)
		}
	}
}

func TestLineRank(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int
	}{
		{"[Rank 3] step=10, skipped=0, lr=[1e-05], mom=[(0.9, 0.999)]", 3},
		{"[2024-01-01 10:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0", 0},
		{"[rank7]: [2024-05-01 10:00:00] iteration 9/100 |", 7},
		{"  [default2]: iteration 9/100 |", 2},
		{"[Rank x] [Rank 5] hello", 5},
		{"[Rank 5 hello", -1}, {"[rank]: x", -1}, {"no rank here", -1}, {"[Rank 99999999]", -1},
	} {
		if got := lineRank([]byte(tc.line)); got != tc.want {
			t.Errorf("lineRank(%q) = %d, want %d", tc.line, got, tc.want)
		}
	}
}
