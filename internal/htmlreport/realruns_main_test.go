package htmlreport

import (
	"os"
	"testing"

	"github.com/nanhunt/nanhunt/internal/realruns"
)

// TestMain removes the real runs the tests extracted.
func TestMain(m *testing.M) {
	code := m.Run()
	realruns.Cleanup()
	os.Exit(code)
}
