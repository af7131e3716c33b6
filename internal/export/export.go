package export

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/nanhunt/nanhunt/dump"
)

// Options says what to export and where.
type Options struct {
	// Path is a dump_path, a step folder, a rank folder or a dump.json.
	Path string
	// Format is the files' format; "" is Parquet.
	Format Format
	// Out is the output folder. It must not lie inside the dump, and must
	// be empty or absent unless Force is set.
	Out string
	// Steps and Ranks restrict the export; nil means all.
	Steps, Ranks map[int]bool
	// Jobs bounds how many files are converted at once (0: one per CPU, at
	// most DefaultMaxJobs). Each file being written holds about 10 MB.
	Jobs int
	// Force writes into a non-empty output folder, replacing the partitions
	// of an earlier export found there.
	Force bool
	// Version is recorded in the manifest and in each file's metadata; ""
	// takes the module version from the build information.
	Version string
}

// DefaultMaxJobs caps the files converted at once when Options.Jobs is 0,
// which keeps memory to a few tens of MB on machines with many CPUs.
const DefaultMaxJobs = 4

// Warning is something the export could not do in full.
type Warning struct {
	File    string `json:"file,omitempty"`
	Offset  *int64 `json:"offset,omitempty"` // byte offset of damage in File
	Message string `json:"message"`
}

func (w Warning) String() string {
	if w.File == "" {
		return w.Message
	}
	return w.File + ": " + w.Message
}

// Summary is what an export wrote.
type Summary struct {
	Source  string       // the dump path, absolute
	Out     string       // the output folder
	Files   []FileResult // every rank folder selected, in step and rank order
	Format  Format       // the files' format
	Written int          // files written
	Damaged int          // dump.json files damaged or unreadable (some or all rows missing)
	Entries int64        // dump.json entries read
	Rows    int64        // rows written
	// BytesRead counts the dump.json bytes consumed, BytesWritten the
	// bytes of the files written.
	BytesRead, BytesWritten int64
	Warnings                []Warning
	Version                 string
}

// Complete reports whether every selected dump.json was read to its end.
func (s *Summary) Complete() bool { return s.Damaged == 0 }

// ErrNothingReadable is returned (with the Summary) when no selected
// dump.json could be read at all.
var ErrNothingReadable = errors.New("no dump.json could be read")

// Run exports the dump at opt.Path to opt.Out. It fails when the options
// are unusable, when nothing can be read, or when writing fails; damaged or
// unreadable dump.json files are warnings in the Summary (see Complete).
func Run(ctx context.Context, opt Options) (*Summary, error) {
	format, err := ParseFormat(string(opt.Format))
	if err != nil {
		return nil, err
	}
	layout, err := dump.Discover(opt.Path)
	if err != nil {
		return nil, err
	}
	dirs := layout.Select(opt.Steps, opt.Ranks)
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: no rank folder matches the requested steps and ranks", opt.Path)
	}
	if err := prepareOutput(opt.Out, opt.Path, opt.Force); err != nil {
		return nil, err
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = min(runtime.GOMAXPROCS(0), DefaultMaxJobs)
	}
	version := opt.Version
	if version == "" {
		version = buildVersion()
	}

	results, err := exportAll(ctx, dirs, opt.Out, format, version, jobs)
	if err != nil {
		// a reader of the folder must never take part of a set for all of it
		removeParts(opt.Out, results)
		return nil, err
	}

	src, err := filepath.Abs(opt.Path)
	if err != nil {
		src = opt.Path
	}
	s := &Summary{Source: src, Out: opt.Out, Format: format, Files: results, Version: version}
	for _, w := range layout.Warnings {
		s.Warnings = append(s.Warnings, Warning{Message: w})
	}
	for i := range results {
		s.account(&results[i])
	}
	if err := writeManifest(s); err != nil {
		removeParts(opt.Out, results)
		return s, err
	}
	if s.Written == 0 {
		return s, fmt.Errorf("%s: %w", opt.Path, ErrNothingReadable)
	}
	return s, nil
}

// exportAll converts the rank folders' dump.json files, jobs at a time, and
// returns their results in the order of dirs.
func exportAll(ctx context.Context, dirs []dump.RankDir, out string, format Format, version string, jobs int) ([]FileResult, error) {
	results := make([]FileResult, len(dirs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs)
	for i, d := range dirs {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			res, err := exportFile(gctx, d, out, format, version)
			results[i] = res
			return err
		})
	}
	err := g.Wait()
	return results, err
}

// removeParts removes the files an export that failed had
// written, and the partition folders it leaves empty: without its
// manifest, a part of the set would read as all of it. The files being
// written when it failed removed themselves (part.abort).
func removeParts(out string, results []FileResult) {
	for _, r := range results {
		if r.Path == "" {
			continue
		}
		p := filepath.Join(out, filepath.FromSlash(r.Path))
		os.Remove(p)
		removeEmptyFolders(filepath.Dir(p), out)
	}
}

// removeEmptyFolders removes dir and the folders above it up to out (out
// itself kept) while they are empty: the partition folders of a file that
// was not written.
func removeEmptyFolders(dir, out string) {
	for root := filepath.Clean(out); dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty: something else is there
		}
	}
}

// account adds one file's counts and problems to the summary.
func (s *Summary) account(r *FileResult) {
	s.Entries += r.Entries
	s.Rows += r.Rows
	s.BytesRead += r.BytesRead
	s.BytesWritten += r.BytesWritten
	if r.Path != "" {
		s.Written++
	}
	switch {
	case r.OpenErr != nil:
		s.Damaged++
		s.Warnings = append(s.Warnings, Warning{File: r.Source, Message: "unreadable: " + r.OpenErr.Error()})
	case r.Damage != nil:
		s.Damaged++
		off := r.Damage.Offset
		msg := fmt.Sprintf("%v; the %d rows of the %d entries before it were written to %s", r.Damage, r.Rows, r.Entries, r.Path)
		if r.Path == "" {
			msg = fmt.Sprintf("%v; nothing could be read, no file written", r.Damage)
		}
		s.Warnings = append(s.Warnings, Warning{File: r.Source, Offset: &off, Message: msg})
	}
}

// buildVersion is the module version the binary was built from.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}
