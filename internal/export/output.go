package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nanhunt/nanhunt/internal/outguard"
)

// ManifestName is the file, in the output folder, that describes an export.
const ManifestName = "_nanhunt_export.json"

// ErrInsideDump is returned when the output folder lies inside the dump.
var ErrInsideDump = errors.New("the output folder is inside the dump folder")

// ErrNotEmpty is returned when the output folder exists and holds files,
// and Options.Force is not set.
var ErrNotEmpty = errors.New("the output folder is not empty")

// prepareOutput checks and creates the output folder. The dump is never
// written to: an output inside it is refused. An existing folder must be
// empty unless force is set; with force, the partitions and manifest of an
// earlier export found there are removed first, so that stale files do not
// mix with the new ones, and anything else is left alone.
func prepareOutput(out, dumpPath string, force bool) error {
	if out == "" {
		return errors.New("no output folder given")
	}
	if outguard.Inside(out, dumpPath) {
		return fmt.Errorf("refusing to write %s: %w %s", out, ErrInsideDump, dumpPath)
	}
	info, err := os.Stat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(out, 0o755); err != nil {
			return fmt.Errorf("create output folder: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("output folder: %w", err)
	case !info.IsDir():
		return fmt.Errorf("output %s exists and is not a folder", out)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	if len(ents) == 0 {
		return nil
	}
	if !force {
		return fmt.Errorf("%s: %w (%d entries); use --force to write into it", out, ErrNotEmpty, len(ents))
	}
	if _, err := os.Stat(filepath.Join(out, ManifestName)); err != nil {
		return nil // not an earlier export: write next to what is there
	}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() && (strings.HasPrefix(name, "step=") || strings.HasPrefix(name, "mode=")) {
			if err := os.RemoveAll(filepath.Join(out, name)); err != nil {
				return fmt.Errorf("remove the earlier export: %w", err)
			}
		}
	}
	if err := os.Remove(filepath.Join(out, ManifestName)); err != nil {
		return fmt.Errorf("remove the earlier export: %w", err)
	}
	return nil
}
