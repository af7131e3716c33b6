package main

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/fsjson"
	"github.com/nanhunt/nanhunt/internal/jsonlex"
	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// errorVerdict is what --format json writes instead of a verdict when the
// input is unusable: the verdict's schema, no anomaly either way, and the
// error, with the file and byte offset when the error carries them.
type errorVerdict struct {
	Schema  string      `json:"schema"`
	Anomaly *bool       `json:"anomaly"`
	Error   errorDetail `json:"error"`
}

// errorDetail is the error; its file byte for byte, as a verdict's paths
// (fsjson: a name that is not UTF-8 is \udcXX, Python's surrogateescape).
type errorDetail struct {
	Message string        `json:"message"`
	File    fsjson.String `json:"file,omitempty"`
	Offset  *int64        `json:"offset,omitempty"`
}

// inputError is an error about one input file, which its message already
// names; File is for the JSON error.
type inputError struct {
	File string
	Err  error
}

func (e *inputError) Error() string { return e.Err.Error() }
func (e *inputError) Unwrap() error { return e.Err }

// wantsJSON reports whether the command that failed was asked for JSON:
// by the parsed --format, or, when parsing stopped at a bad flag before
// it, by the arguments.
func wantsJSON(cmd *cobra.Command, args []string) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("format")
	if f == nil {
		return false
	}
	if f.Changed {
		return jsonFormats[f.Value.String()]
	}
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--format="); ok && jsonFormats[v] {
			return true
		}
		if a == "--format" && i+1 < len(args) && jsonFormats[args[i+1]] {
			return true
		}
	}
	return false
}

// jsonFormats are the --format values programs parse as one JSON object:
// an unusable input gives them one too.
var jsonFormats = map[string]bool{"json": true, "skill": true}

// writeErrorJSON writes err as an errorVerdict.
func writeErrorJSON(w io.Writer, err error) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(errorVerdict{Schema: verdict.Schema, Error: detailOf(err)})
}

// detailOf finds the file and the byte offset err carries, by type only.
func detailOf(err error) errorDetail {
	d := errorDetail{Message: err.Error()}
	var ue *trace.UnreadableError
	var ie *inputError
	var nie *nanhunt.InputError
	var pe *fs.PathError
	switch {
	case errors.As(err, &ue) && len(ue.Problems) == 1:
		d.File, d.Offset = fsjson.String(ue.Problems[0].File), ue.Problems[0].Offset
	case errors.As(err, &ie):
		d.File = fsjson.String(ie.File)
	case errors.As(err, &nie):
		d.File = fsjson.String(nie.File)
	case errors.As(err, &pe):
		d.File = fsjson.String(pe.Path)
	}
	if d.Offset != nil {
		return d
	}
	var fe *dump.FormatError
	var se *jsonlex.SyntaxError
	var je *json.SyntaxError
	switch {
	case errors.As(err, &fe):
		d.Offset = &fe.Offset
	case errors.As(err, &se):
		d.Offset = &se.Offset
	case errors.As(err, &je):
		d.Offset = &je.Offset
	}
	return d
}
