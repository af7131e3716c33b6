package trainlog

import (
	"strings"
	"testing"
)

// A skip the loss scaler recovers from is an overflow, not a first
// non-finite value; a run of skips that does not end, or a skipped
// iteration whose printed loss is not finite, is a value that stays
// non-finite.
func TestPersistentSkips(t *testing.T) {
	log := func(skipped ...int) string {
		var b strings.Builder
		sk := map[int]bool{}
		for _, s := range skipped {
			sk[s] = true
		}
		for it := 1; it <= 12; it++ {
			if sk[it] {
				b.WriteString(megLineText(it, "7.0E+00", "", 1, 0))
			} else {
				b.WriteString(megLineText(it, "7.0E+00", "1.5", 0, 0))
			}
		}
		return b.String()
	}
	for _, tc := range []struct {
		name       string
		text       string
		wantIter   int // of FirstNonFinite; 0: none
		wantMetric string
		persist    bool
	}{
		{"one overflow recovered", log(5), 0, "", false},
		{"the initial scale search", log(1, 2, 3, 4), 0, "", false},
		{"two at the end of the log", log(11, 12), 11, "grad_norm", true},
		{"three in a row after training started", log(6, 7, 8), 6, "grad_norm", true},
		{"two in a row in the middle", log(6, 7), 0, "", false},
		{"a skipped iteration that printed a NaN loss", strings.Replace(log(5), megLineText(5, "7.0E+00", "", 1, 0), megLineText(5, "nan", "", 1, 0), 1), 5, "loss", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := mustRead(t, writeFiles(t, "train.log", tc.text), Options{})
			s := l.Summary()
			f := s.FirstNonFinite
			switch {
			case tc.wantIter == 0 && f != nil:
				t.Errorf("first non-finite %+v, want none", f)
			case tc.wantIter != 0 && (f == nil || f.Iteration != tc.wantIter || f.Metric != tc.wantMetric):
				t.Errorf("first non-finite %+v, want iteration %d %s", f, tc.wantIter, tc.wantMetric)
			}
			if (s.PersistentSkips != nil) != tc.persist {
				t.Errorf("persistent skips %+v, want %v", s.PersistentSkips, tc.persist)
			}
			if len(s.Skipped) == 0 {
				t.Error("the skips are not listed")
			}
		})
	}
}
