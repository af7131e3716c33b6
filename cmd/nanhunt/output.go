package main

import (
	"io"

	"github.com/nanhunt/nanhunt/internal/outguard"
)

// writeOut writes to stdout when path is "" or "-", else to the file,
// through a temporary file (internal/outguard). The caller checked the
// path with a Guard first.
func writeOut(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(stdout)
	}
	return outguard.WriteFile(path, write)
}

// out names an output for the guard's messages.
func out(flag, path string) outguard.Output { return outguard.Output{Flag: flag, Path: path} }
