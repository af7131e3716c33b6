package trainlog

import (
	"context"
	"errors"
	"testing"

	"github.com/nanhunt/nanhunt/internal/ctxtest"
)

// A cancelled context makes Read return context.Canceled at its next
// check, without reading on: a few checks after the cancellation, while a
// whole read makes a check per 256 KiB or so of each file.
func TestReadCancelled(t *testing.T) {
	first, _ := writeMegatronLog(t, 8<<20)
	second, _ := writeMegatronLog(t, 1<<20)
	paths := []string{first, second}
	never := ctxtest.NewCancelAfter(1 << 62)
	if _, err := Read(never, paths, Options{}); err != nil {
		t.Fatal(err)
	}
	checks := never.Checks()
	if checks < 30 {
		t.Fatalf("a whole read of 9 MB checks the context %d times; the test needs more", checks)
	}
	for _, tt := range []struct {
		name string
		at   int64
	}{
		{"cancelled before", 1},
		{"cancelled in the first reads", 4},
		{"cancelled half way through the first file", checks / 3},
		{"cancelled in the second file", checks - 2},
		{"cancelled at the last check", checks},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctxtest.NewCancelAfter(tt.at)
			l, err := Read(ctx, paths, Options{})
			if !errors.Is(err, context.Canceled) || l != nil {
				t.Fatalf("Read = %v, %v; want context.Canceled", l, err)
			}
			if after := ctx.Checks() - tt.at; after > 3 {
				t.Errorf("%d checks after the cancellation: the read went on", after)
			}
		})
	}
}
