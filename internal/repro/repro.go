package repro

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/outguard"
	"github.com/nanhunt/nanhunt/internal/trace"
)

// Auto, as Options.Step or Options.Rank, takes the step or rank from the
// verdict's origin.
const Auto = -1

// Options says which call to reproduce and where to write the case.
type Options struct {
	// Path is a dump_path, a step folder, a rank folder or a dump.json of a
	// "tensor"-task dump.
	Path string
	// Op is the entry name ("Torch.sqrt.0.backward"), or an API call without
	// direction ("Torch.sqrt.0", meaning its forward). "": the verdict's
	// root-cause op.
	Op string
	// Step and Rank select the rank folder; Auto takes them from the
	// verdict's origin (its first rank). Zero is step 0 or rank 0, not a
	// default: set Auto to have them found.
	Step, Rank int
	// Out is the case folder: created, absent or empty, never inside the dump.
	Out string
	// Force writes into a non-empty Out, replacing the files of the case.
	Force bool
	// Device is repro.py's default device: cpu (""), cuda, cuda:N, npu, npu:N.
	Device string
	// Context bounds the analysis that finds the default op and the copy
	// of the tensor files; nil means context.Background(). When it is
	// cancelled, nothing of the case is left written.
	Context context.Context
}

// Case is a reproduction case that was written.
type Case struct {
	Dir       string // the case folder
	Dump      string // the dump.json it was made from
	Entry     string // the entry reproduced
	API       string // "Torch.sqrt"
	Direction string // "forward" or "backward"
	Forward   string // for a backward entry, the forward entry re-run first
	Step      int
	Rank      int
	Call      Call
	// FromVerdict: the op, step or rank came from the verdict's origin.
	FromVerdict bool
	// Comparison: the call is the origin's, but on a rank that is not an
	// origin rank (a clean rank to compare with).
	Comparison bool
	// Files are the tensor files copied into Dir, in load order.
	Files []string
	// Arguments are the forward call's non-tensor arguments (and the
	// arguments that hold tensors inside lists or dicts).
	Arguments []Argument
	// Runnable: repro.py can run the call as written (false for
	// torch.distributed calls and for custom APIs until the import is added).
	Runnable bool
	// Warnings are things the case leaves out or had to guess.
	Warnings []string
}

// Names of the files a case folder holds besides the tensors.
const (
	CaseJSON = "case.json"
	ReproPy  = "repro.py"
)

// ErrStatisticsOnly is returned when the entry's tensors were not saved:
// the dump was made with the "statistics" task.
var ErrStatisticsOnly = errors.New("the dump holds statistics only, no saved tensors")

// Write writes the reproduction case of one call of a tensor dump: it runs
// the analysis of package trace when the op, step or rank is left to the
// verdict, finds the entry (and, for a backward entry, its forward entry)
// in the rank folder's dump.json, finds the saved tensors it needs, and
// writes them with case.json and repro.py to Options.Out. Nothing is
// written until everything was found, nothing ever inside the dump, and the
// case folder is written all or nothing. Tensor files come only from inside
// the dump folder given and must pass checkTensorFile (see the package doc).
func Write(opt Options) (*Case, error) {
	device, err := checkDevice(opt.Device)
	if err != nil {
		return nil, err
	}
	if opt.Out == "" {
		return nil, fmt.Errorf("no case folder given (-o DIR)")
	}
	if outguard.Inside(opt.Out, opt.Path) {
		return nil, fmt.Errorf("refusing to write %s inside the dump folder %s", opt.Out, opt.Path)
	}
	if err := checkOut(opt.Out, opt.Force); err != nil {
		return nil, err
	}
	layout, err := dump.Discover(opt.Path)
	if err != nil {
		return nil, err
	}
	c := &Case{Dir: opt.Out, Step: opt.Step, Rank: opt.Rank}
	op := opt.Op
	if op == "" || opt.Step == Auto || opt.Rank == Auto {
		if err := c.fromVerdict(opt, &op); err != nil {
			return nil, err
		}
	}
	dirs := layout.Select(map[int]bool{c.Step: true}, map[int]bool{c.Rank: true})
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: no rank folder for step %d, rank %d (steps %s here)", opt.Path, c.Step, c.Rank, notation.FormatRanges(layout.Steps()))
	}
	b, err := c.read(dirs, op)
	if err != nil {
		return nil, err
	}
	if outguard.Inside(opt.Out, b.dir) {
		return nil, fmt.Errorf("refusing to write %s inside the dump folder %s", opt.Out, b.dir)
	}
	folder, err := openDumpFolder(opt.Path)
	if err != nil {
		return nil, err
	}
	defer folder.Close()
	if err := b.locate(folder); err != nil {
		return nil, err
	}
	script, err := b.script(device)
	if err != nil {
		return nil, err
	}
	cj, err := b.caseJSON(device)
	if err != nil {
		return nil, err
	}
	if err := b.write(opt.context(), folder, opt.Out, cj, script); err != nil {
		return nil, err
	}
	return c, nil
}

// write writes the case folder all or nothing: the tensor files, case.json,
// then repro.py, each through a temporary file renamed into place once all
// were written.
func (b *builder) write(ctx context.Context, d *dumpFolder, out string, caseJSON, script []byte) error {
	w, err := newCaseWriter(out)
	if err != nil {
		return err
	}
	err = b.writeFiles(ctx, d, w, caseJSON, script)
	if err == nil {
		err = w.commit()
	}
	if err != nil {
		w.abort()
	}
	return err
}

// writeFiles writes every file of the case to its temporary file.
func (b *builder) writeFiles(ctx context.Context, d *dumpFolder, w *caseWriter, caseJSON, script []byte) error {
	for _, t := range b.files {
		if err := b.copyTensor(ctx, d, w, t); err != nil {
			return err
		}
	}
	if err := w.addBytes(CaseJSON, 0o644, caseJSON); err != nil {
		return err
	}
	return w.addBytes(ReproPy, 0o755, script)
}

// context is the context of Options, context.Background() when nil.
func (opt Options) context() context.Context {
	if opt.Context == nil {
		return context.Background()
	}
	return opt.Context
}

// fromVerdict fills in the op, step and rank that were not given from the
// verdict's origin.
func (c *Case) fromVerdict(opt Options, op *string) error {
	v, err := trace.Run(opt.context(), trace.Options{Path: opt.Path})
	if err != nil {
		return fmt.Errorf("find the origin to reproduce (or name it with --op, --step and --rank): %w", err)
	}
	if v.Origin == nil || len(v.Origin.Ranks) == 0 {
		return fmt.Errorf("%s: no NaN/Inf found: name the call to reproduce with --op, --step and --rank", opt.Path)
	}
	o := v.Origin
	c.FromVerdict = true
	if *op == "" {
		*op = o.Op
		if !o.Captured {
			c.Warnings = append(c.Warnings, fmt.Sprintf("the verdict's origin was not captured: %s is the first call that shows the %s, not the one that made it", o.Op, o.Kind))
		}
	}
	if c.Step == Auto {
		c.Step = o.Step
	}
	if c.Rank == Auto {
		c.Rank = o.Ranks[0]
	}
	c.Comparison = !slices.Contains(o.Ranks, c.Rank)
	return nil
}

// checkDevice reads the default device of repro.py.
func checkDevice(d string) (string, error) {
	if d == "" {
		return "cpu", nil
	}
	kind, idx, hasIdx := strings.Cut(d, ":")
	switch kind {
	case "cpu":
		if !hasIdx {
			return d, nil
		}
	case "cuda", "npu":
		if n, err := strconv.Atoi(idx); !hasIdx || err == nil && n >= 0 && n < 1<<16 {
			return d, nil
		}
	}
	return "", fmt.Errorf("device %q: want cpu, cuda, cuda:N, npu or npu:N", d)
}

// checkOut accepts an absent or empty folder, or any folder with force.
func checkOut(out string, force bool) error {
	info, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is a file, want a folder for the case", out)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	if len(ents) > 0 && !force {
		return fmt.Errorf("%s is not empty (use --force to write the case there anyway)", out)
	}
	return nil
}
