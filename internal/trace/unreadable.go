package trace

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/internal/safeio"
	"github.com/nanhunt/nanhunt/verdict"
)

// UnreadableError is returned when no dump.json of the selection could be
// read; Problems says why, file by file (with a byte offset for damage).
type UnreadableError struct {
	Path     string
	Problems []verdict.Warning
}

func (e *UnreadableError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: no dump.json could be read", e.Path)
	const shown = 3
	for i, p := range e.Problems {
		if i == shown {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-shown)
			break
		}
		b.WriteString("; ")
		if p.File != "" && !strings.Contains(p.Message, p.File) {
			b.WriteString(p.File + ": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// fileChanged checks that the rank's dump.json is still the file the scan
// opened, and notes how it changed when it is not.
func (s *rankScan) fileChanged() bool {
	if s.openErr != nil || s.ident == (safeio.Identity{}) {
		return false
	}
	if afterScan != nil {
		afterScan(s.dir.Dump)
	}
	if changed, how := safeio.Changed(s.dir.Dump, s.ident); changed {
		s.changed = how
		return true
	}
	return false
}

// afterScan, when set (by tests), is called each time a dump.json's
// identity is about to be checked again.
var afterScan func(path string)
