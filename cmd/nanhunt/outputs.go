package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// outputs writes a command's outputs each on its own: one that fails does
// not keep the others from being written, and the failures are reported
// together at the end (exit status 2), each naming its output.
type outputs struct {
	stdout        io.Writer
	failed        []error
	stdoutWritten bool // a result went to standard output
}

// file writes one output file (flag names it in the message).
func (o *outputs) file(flag, path string, write func(io.Writer) error) {
	if path == "" {
		return
	}
	if path == "-" {
		o.toStdout(flag, write)
		return
	}
	if err := writeOut(path, o.stdout, write); err != nil {
		o.failed = append(o.failed, fmt.Errorf("%s %s was not written: %w", flag, path, err))
	}
}

// toStdout writes the result to standard output.
func (o *outputs) toStdout(what string, write func(io.Writer) error) {
	if err := write(o.stdout); err != nil {
		o.failed = append(o.failed, fmt.Errorf("%s to standard output: %w", what, err))
		return
	}
	o.stdoutWritten = true
}

// err is nil when every output was written, else an outputsError.
func (o *outputs) err() error {
	if len(o.failed) == 0 {
		return nil
	}
	return &outputsError{failed: o.failed, stdoutWritten: o.stdoutWritten}
}

// outputsError is the failure of some of a command's outputs after the
// others were written.
type outputsError struct {
	failed        []error
	stdoutWritten bool
}

func (e *outputsError) Error() string {
	msgs := make([]string, len(e.failed))
	for i, f := range e.failed {
		msgs[i] = f.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e *outputsError) Unwrap() []error { return e.failed }

// stdoutHolds reports whether standard output already holds the command's
// result, so that no JSON error object may follow it there: standard
// output holds one verdict or one error.
func stdoutHolds(err error) bool {
	var oe *outputsError
	return errors.As(err, &oe) && oe.stdoutWritten
}
