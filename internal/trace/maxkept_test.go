package trace

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
)

// The reader keeps maxKept tensors of an entry one by one and merges the
// next: the bound the warning names is the reader's.
func TestMaxKeptIsTheReaders(t *testing.T) {
	for _, tc := range []struct{ tensors, merged int }{{maxKept, 0}, {maxKept + 1, 1}} {
		var b strings.Builder
		b.WriteString(`{"data": {"Torch.cat.0.forward": {"input_args": [`)
		for i := range tc.tensors {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"type": "torch.Tensor", "Max": %d, "Min": 0}`, i)
		}
		b.WriteString(`]}}}`)
		r := dump.NewReader(strings.NewReader(b.String()), dump.ReaderOptions{})
		if !r.Next() {
			t.Fatalf("no entry: %v", r.Err())
		}
		if got := r.Entry().Merged; got != tc.merged {
			t.Errorf("%d tensors: %d merged, want %d", tc.tensors, got, tc.merged)
		}
	}
}
