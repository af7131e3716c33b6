package watch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/safeio"
)

// State is what a watch needs to resume where it stopped: the folder, the
// first step not checked yet and the last clean one. A step some expected
// rank of which was not read whole is not recorded as checked: next_step
// stays at the first such step, so that a resumed watch reads it (and the
// steps after it) again rather than skip it. It is saved after every step
// checked.
type State struct {
	Path  string `json:"path"`
	Next  int    `json:"next_step"`
	Prev  *int   `json:"last_clean_step"`
	Alarm *int   `json:"alarm_step"` // the step of the alarm, once raised
}

// maxStateBytes bounds a state file read back.
const maxStateBytes = 1 << 20

// CheckStateFile refuses, without opening it, a state file that is
// neither absent nor a regular file (symbolic links are followed): a named
// pipe would block its read and a device would never end.
func CheckStateFile(file string) error {
	info, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !info.Mode().IsRegular():
		return fmt.Errorf("%s, not a regular file: a watch state is a regular file, or none yet", safeio.Kind(info.Mode()))
	}
	return nil
}

// LoadState reads a state file; a missing file is a fresh start. A state
// written for another folder is refused, and so is a file that is not a
// regular one (it is never waited on) or not a state (ParseState).
func LoadState(file, path string) (*State, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	b, err := safeio.ReadFile(file, maxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &State{Path: abs}, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := ParseState(b)
	if err != nil {
		return nil, fmt.Errorf("%s: not a watch state: %w", file, err)
	}
	if st.Path != abs {
		return nil, fmt.Errorf("%s: the state of a watch of %s, not of %s", file, st.Path, abs)
	}
	return &st, nil
}

// Save writes the state whole (a temporary file renamed into place).
func (st *State) Save(file string) error {
	return outguard.WriteFile(file, func(w io.Writer) error { return encodeState(w, st) })
}

// SaveError is a state file that could not be written. The watch goes on
// without it, and Run returns the first such error when it ends.
type SaveError struct {
	File string
	Err  error
}

func (e *SaveError) Error() string { return fmt.Sprintf("%s was not written: %v", e.File, e.Err) }

func (e *SaveError) Unwrap() error { return e.Err }

// encodeState writes st as Save does.
func encodeState(w io.Writer, st *State) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(st)
}
