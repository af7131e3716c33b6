package trace

import (
	"strings"
	"testing"
)

// Every hint that depends on the dtype uses the tensor's own.
func TestHintUsesTheDtype(t *testing.T) {
	for dtype, want := range map[string]string{
		"torch.float16": "~11.1 in float16", "torch.bfloat16": "~88.7 in bfloat16", "torch.float32": "~88.7 in float32",
		"torch.float64": "~709.8", "": "~11.1 in float16",
	} {
		h, ok := hint("exp", dtype)
		if !ok || !strings.Contains(h, want) {
			t.Errorf("hint(exp, %q) = %q, want %q", dtype, h, want)
		}
	}
	if h, _ := hint("exp", "torch.float32"); strings.Contains(h, "compute it in float32") {
		t.Errorf("hint(exp, float32) = %q: it is float32 already", h)
	}
	if h, _ := hint("exp", "torch.float16"); !strings.Contains(h, "compute it in float32") {
		t.Errorf("hint(exp, float16) = %q", h)
	}
	if h, _ := hint("log", "torch.bfloat16"); strings.Contains(h, "%") {
		t.Errorf("hint(log) = %q", h)
	}
}
