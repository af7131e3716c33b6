package trace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/internal/realruns"
)

func TestMain(m *testing.M) {
	code := m.Run()
	realruns.Cleanup()
	os.Exit(code)
}

// Every real msprobe run of testdata/realruns gives its truth, at every
// level it was dumped at: custom kernels called by the backward, keyword
// point-to-point with micro-batches, ZeRO-style reduce and broadcast, a
// hand-written reducer's 0/0, a forward-only dump, sparse steps with a
// loss-scaler skip.
func TestRealRunsTruth(t *testing.T) {
	for _, name := range realruns.Scenarios() {
		truth := realruns.Truth(t, name)
		dir := realruns.Dir(t, name)
		for _, level := range truth.Levels {
			t.Run(name+"/"+level, func(t *testing.T) {
				v, err := Run(context.Background(), Options{Path: filepath.Join(dir, level)})
				if err != nil {
					t.Fatal(err)
				}
				want := truth.Truth
				if ov, ok := truth.LevelOverrides[level]; ok && ov.Op != "" {
					want.Op = ov.Op
				}
				if v.Anomaly != want.Anomaly {
					t.Fatalf("anomaly %v, want %v", v.Anomaly, want.Anomaly)
				}
				if !want.Anomaly {
					return
				}
				o := v.Origin
				if o.Step != want.Step || !slices.Equal(o.Ranks, want.Ranks) || o.Op != want.Op || o.Stage != want.Stage ||
					o.Kind != want.Kind || o.Tie != want.Tie || o.Captured != want.Captured {
					t.Errorf("origin step %d ranks %v op %s stage %s (%s) kind %s tie %v captured %v\n  want step %d ranks %v op %s stage %s kind %s tie %v captured %v",
						o.Step, o.Ranks, o.Op, o.Stage, o.Phase, o.Kind, o.Tie, o.Captured,
						want.Step, want.Ranks, want.Op, want.Stage, want.Kind, want.Tie, want.Captured)
				}
				switch f := v.FirstNaN; {
				case want.FirstNaN == nil && f != nil:
					t.Errorf("first NaN %+v, want none", f)
				case want.FirstNaN != nil && (f == nil || f.Step != want.FirstNaN.Step || f.Rank != want.FirstNaN.Rank || f.Op != want.FirstNaN.Op):
					t.Errorf("first NaN %+v, want %+v", f, want.FirstNaN)
				}
				switch c := v.Carrier; {
				case want.Carrier == nil && c != nil:
					t.Errorf("carrier %+v, want none", c)
				case want.Carrier != nil && (c == nil || c.Step != want.Carrier.Step || c.Op != want.Carrier.Op ||
					!slices.Equal(c.FromRanks, want.Carrier.FromRanks) || !slices.Equal(c.ToRanks, want.Carrier.ToRanks)):
					t.Errorf("carrier %+v, want %+v", c, want.Carrier)
				}
				if len(v.Recovered) != len(want.Recovered) {
					t.Fatalf("recovered %+v, want %+v", v.Recovered, want.Recovered)
				}
				for i, r := range want.Recovered {
					if got := v.Recovered[i]; got.Step != r.Step || got.Op != r.Op || !slices.Equal(got.Ranks, r.Ranks) {
						t.Errorf("recovered %+v, want %+v", got, r)
					}
				}
			})
		}
	}
}

// A forward-only dump (data_mode ["forward"]): no backward entry, so the
// masks' -inf of the clean steps cannot be severe, and the byte search
// clears those files without parsing them.
func TestRealForwardOnlyMasksAreCleared(t *testing.T) {
	dir := filepath.Join(realruns.Dir(t, "forward-only"), "L1")
	v, err := Run(context.Background(), Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	clean := 0
	for _, st := range v.Steps {
		if st.Status == "clean" {
			clean++
		}
	}
	if clean != 3 || v.Scanned.Cleared < 4*clean {
		t.Errorf("%d clean steps, %d of %d files cleared, want every file of the 3 clean steps", clean, v.Scanned.Cleared, v.Scanned.Files)
	}
}
