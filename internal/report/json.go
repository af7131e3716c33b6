package report

import (
	"encoding/json"
	"io"

	"github.com/nanhunt/nanhunt/trace"
)

// JSON writes the verdict as indented JSON (schema trace.Schema).
func JSON(w io.Writer, v *trace.Verdict) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
