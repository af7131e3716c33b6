package trace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A dump.json rewritten while it is read is read again; rewritten again,
// the verdict warns and its confidence drops.
func TestFileChangedWhileRead(t *testing.T) {
	src := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	tests := []struct {
		name     string
		rewrites int // how many scans of the origin rank's file are followed by a rewrite
		warned   bool
	}{
		{"unchanged", 0, false},
		{"once: read again", 1, false},
		{"every time", 1000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := copyRun(t, src, "step4", "step5")
			target := filepath.Join(run, "step5", "rank2", "dump.json")
			var mu sync.Mutex
			left := tt.rewrites
			afterScan = func(path string) {
				mu.Lock()
				defer mu.Unlock()
				if path != target || left == 0 {
					return
				}
				left--
				// the same bytes, written again: a new modification time
				stamp := time.Now().Add(time.Duration(left+1) * time.Second)
				if err := os.Chtimes(path, stamp, stamp); err != nil {
					t.Error(err)
				}
			}
			defer func() { afterScan = nil }()
			v, err := Run(context.Background(), Options{Path: run})
			if err != nil {
				t.Fatal(err)
			}
			o := v.Origin
			if o == nil || o.Op != "Torch.sqrt.0.backward" {
				t.Fatalf("origin = %+v", o)
			}
			warned := false
			for _, w := range v.Warnings {
				if w.File == target && strings.Contains(w.Message, "changed while it was read") {
					warned = true
				}
			}
			if warned != tt.warned {
				t.Errorf("warned %v, want %v: %+v", warned, tt.warned, v.Warnings)
			}
			if tt.warned && o.Confidence == "high" {
				t.Errorf("confidence high for a file that changed while it was read")
			}
			if !tt.warned && o.Confidence != "high" {
				t.Errorf("confidence %s (%v), want high", o.Confidence, o.Reasons)
			}
		})
	}
}
