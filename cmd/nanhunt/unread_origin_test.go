package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/realruns"
)

// Only the receivers of a real pipeline run read (the sending rank left
// out): the text says where the value came from and where it arrived, and
// never that the first call "already had it in its inputs" above inputs it
// prints as finite.
func TestUnreadOriginWords(t *testing.T) {
	dir := filepath.Join(realruns.Dir(t, "pp-p2p-microbatch"), "L1")
	out, _, code := runCLI(t, "trace", dir, "--ranks", "2,3")
	if code != exitAnomaly {
		t.Fatalf("exit %d, want %d\n%s", code, exitAnomaly, out)
	}
	for _, want := range []string{
		"nanhunt: the first NaN comes from rank 0, which was not read: at step 3 it arrives on rank 2, in Distributed.recv.1.forward",
		"in the dump  no: it arrived from rank 0, which was not read",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "already had it in its inputs") {
		t.Errorf("the text says the receive already had it in its inputs:\n%s", out)
	}
}
