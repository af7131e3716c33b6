package monitor

import (
	"context"
	"errors"
	"testing"

	"github.com/nanhunt/nanhunt/internal/ctxtest"
)

// A cancelled context makes Read return context.Canceled at its next
// check, without reading on: a few checks after the cancellation, while a
// whole read of the file makes a check per 256 KiB.
func TestReadCancelled(t *testing.T) {
	dir := t.TempDir()
	writeBigActv(t, dir, 16)
	never := ctxtest.NewCancelAfter(1 << 62)
	if _, err := Read(never, dir, Options{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	checks := never.Checks()
	if checks < 50 {
		t.Fatalf("a whole read of 16 MB checks the context %d times; the test needs more", checks)
	}
	for _, tt := range []struct {
		name string
		at   int64
	}{
		{"cancelled before", 1},
		{"cancelled in the first reads", 4},
		{"cancelled half way", checks / 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctxtest.NewCancelAfter(tt.at)
			r, err := Read(ctx, dir, Options{Jobs: 1})
			if !errors.Is(err, context.Canceled) || r != nil {
				t.Fatalf("Read = %v, %v; want context.Canceled", r, err)
			}
			if after := ctx.Checks() - tt.at; after > 3 {
				t.Errorf("%d checks after the cancellation: the read went on", after)
			}
		})
	}
}
