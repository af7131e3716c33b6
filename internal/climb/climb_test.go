package climb

import (
	"slices"
	"testing"
)

// rises fires when the last three points each rise.
func rises(w []Point) bool {
	n := len(w)
	return n >= 3 && w[n-1].Value > w[n-2].Value && w[n-2].Value > w[n-3].Value
}

func TestTrack(t *testing.T) {
	for _, tc := range []struct {
		name      string
		vals      []float64
		stopAt    int // index of a point replaced by a stop, -1 for none
		fireStep  int // last step of Fired, -1 for none
		after     []float64
		lastValue float64
	}{
		{"flat never fires", []float64{1, 1, 1, 1}, -1, -1, nil, 1},
		{"fires at the third rise, keeps what follows", []float64{1, 2, 3, 4, 2}, -1, 2, []float64{4, 2}, 2},
		{"a stop ends the series", []float64{1, 2, 9, 3, 4, 5}, 2, -1, nil, 2},
		{"fires once only", []float64{1, 2, 3, 1, 2, 3}, -1, 2, []float64{1, 2, 3}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr Track
			for i, v := range tc.vals {
				if i == tc.stopAt {
					tr.Stop(i)
					continue
				}
				tr.Add(Point{Step: i, Value: v}, rises)
			}
			got := -1
			if tr.Fired != nil {
				got = tr.Fired[len(tr.Fired)-1].Step
			}
			if got != tc.fireStep {
				t.Fatalf("fired at %d, want %d", got, tc.fireStep)
			}
			var after []float64
			for _, p := range tr.After {
				after = append(after, p.Value)
			}
			if !slices.Equal(after, tc.after) {
				t.Errorf("after %v, want %v", after, tc.after)
			}
			if p, ok := tr.Last(); !ok || p.Value != tc.lastValue {
				t.Errorf("last %v %v, want %v", p, ok, tc.lastValue)
			}
		})
	}
}

// The window holds the last Window points; a step out of order is ignored;
// Shift moves every step kept.
func TestTrackWindowOrderShift(t *testing.T) {
	var tr Track
	for i := range Window + 4 {
		tr.Add(Point{Step: i, Value: float64(i)}, nil)
	}
	tr.Add(Point{Step: 3, Value: 100}, nil)
	w := tr.Window()
	if len(w) != Window || w[0].Step != 4 || w[len(w)-1].Step != Window+3 || tr.Count != Window+4 {
		t.Fatalf("window %v count %d", w, tr.Count)
	}
	tr.Shift(-1)
	if w := tr.Window(); w[0].Step != 3 {
		t.Errorf("shifted window starts at %d, want 3", w[0].Step)
	}
}

// After a series fired, at most MaxAfter points are kept and the rest
// counted.
func TestTrackAfterBound(t *testing.T) {
	var tr Track
	fire := func(w []Point) bool { return true }
	for i := range MaxAfter + 10 {
		tr.Add(Point{Step: i, Value: 1}, fire)
	}
	if len(tr.Fired) != 1 || len(tr.After) != MaxAfter || tr.AfterMore != 9 {
		t.Errorf("fired %d after %d more %d", len(tr.Fired), len(tr.After), tr.AfterMore)
	}
}
