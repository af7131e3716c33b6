package report

import (
	"encoding/json"
	"io"

	"github.com/nanhunt/nanhunt/verdict"
)

// JSON writes the verdict as indented JSON (schema verdict.Schema).
func JSON(w io.Writer, v *verdict.Verdict) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
