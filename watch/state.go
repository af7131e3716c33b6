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

// LoadState reads a state file; a missing file is a fresh start. A state
// written for another folder is refused.
func LoadState(file, path string) (*State, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return &State{Path: abs}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxStateBytes {
		return nil, fmt.Errorf("%s: larger than a watch state can be", file)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: not a watch state: %w", file, err)
	}
	if st.Path != abs {
		return nil, fmt.Errorf("%s: the state of a watch of %s, not of %s", file, st.Path, abs)
	}
	if st.Next < 0 {
		return nil, fmt.Errorf("%s: next_step %d", file, st.Next)
	}
	return &st, nil
}

// Save writes the state whole (a temporary file renamed into place).
func (st *State) Save(file string) error {
	return outguard.WriteFile(file, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(st)
	})
}
