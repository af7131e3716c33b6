package reference

import (
	"os"
	"testing"

	"github.com/nanhunt/nanhunt/internal/realruns"
)

func TestMain(m *testing.M) {
	code := m.Run()
	realruns.Cleanup()
	os.Exit(code)
}
