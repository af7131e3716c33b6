package repro

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/notation"
)

// builder holds what a case is made of while it is put together.
type builder struct {
	c      *Case
	dir    string // the rank folder
	df     *dumpFile
	target *entryData   // the entry reproduced
	fwd    *entryData   // the forward entry (the target for a forward entry)
	bwd    *entryData   // the backward entry, nil for a forward one
	inputs []*TensorRef // the forward call's tensors, in file order
	grads  []*TensorRef // the backward entry's input tensors (grads of the forward outputs)
	files  []*TensorRef // the tensors to copy, one per file
}

// resolveOp turns --op into an entry name: an API call without direction
// means its forward.
func resolveOp(op string) (dump.Name, error) {
	n := dump.ParseName(op)
	if n.Dir == notation.DirUnknown {
		if f := dump.ParseName(op + ".forward"); f.Dir == notation.Forward && f.Call >= 0 {
			return f, nil
		}
		return n, fmt.Errorf("op %q: want an entry name such as Torch.sqrt.0.forward or Torch.sqrt.0.backward, or Torch.sqrt.0 for the forward", op)
	}
	return n, nil
}

// read finds the entries of the op in the rank folders (one per execution
// mode) and decodes them.
func (c *Case) read(dirs []dump.RankDir, op string) (*builder, error) {
	n, err := resolveOp(op)
	if err != nil {
		// Perhaps an API without counter ("Torch.sqrt"): list its calls.
		var calls []string
		for _, d := range dirs {
			if df, rerr := readEntries(d.Dump, nil, op); rerr == nil {
				calls = append(calls, df.Similar...)
			}
		}
		if len(calls) > 0 {
			return nil, fmt.Errorf("%w; calls of %s in step %d, rank %d: %s", err, op, c.Step, c.Rank, strings.Join(calls, ", "))
		}
		return nil, err
	}
	call, err := MapAPI(n)
	if err != nil {
		return nil, err
	}
	want := []string{n.Full}
	if n.Dir == notation.Backward {
		want = append(want, n.ForwardName())
	}
	var similar []string
	for _, d := range dirs {
		df, err := readEntries(d.Dump, want, n.Op())
		if err != nil {
			return nil, err
		}
		similar = append(similar, df.Similar...)
		target := df.Entries[n.Full]
		if target == nil {
			continue
		}
		b := &builder{c: c, dir: d.Dir, df: df, target: target, fwd: target}
		c.Dump, c.Entry, c.API, c.Direction, c.Call = d.Dump, n.Full, n.Op(), n.Dir.String(), call
		if df.Header.Framework == "mindspore" {
			return nil, fmt.Errorf("%s: a MindSpore dump: repro writes PyTorch cases only", d.Dump)
		}
		if n.Dir == notation.Backward {
			b.bwd = target
			b.fwd = df.Entries[n.ForwardName()]
			c.Forward = n.ForwardName()
			if b.fwd == nil {
				return nil, fmt.Errorf("%s: %s is not in the dump: a backward call is re-run from its forward call's inputs, so dump both (msprobe \"data_mode\": [\"all\"])", d.Dump, c.Forward)
			}
		}
		return b, b.prepare()
	}
	where := dirs[0].Dump
	if len(dirs) > 1 {
		where = fmt.Sprintf("the %d dump.json files of step %d, rank %d", len(dirs), c.Step, c.Rank)
	}
	msg := fmt.Sprintf("entry %s not found in %s", n.Full, where)
	if len(similar) > 0 {
		msg += " (entries of " + n.Op() + " there: " + strings.Join(similar, ", ") + ")"
	}
	return nil, errors.New(msg)
}

// prepare checks that the tensors were saved, names their variables and
// decides which inputs get gradients.
func (b *builder) prepare() error {
	b.inputs = b.fwd.tensorsOf("input_args", "input_kwargs")
	if b.bwd != nil {
		b.grads = b.bwd.tensorsOf("input")
	}
	saved := 0
	for _, e := range []*entryData{b.fwd, b.bwd} {
		if e == nil {
			continue
		}
		for _, t := range e.Tensors {
			if t.DataName != "" {
				saved++
			}
		}
	}
	if saved == 0 {
		task := b.df.Header.Task
		if task == "" {
			task = "unknown"
		}
		return fmt.Errorf("%s: %s (task %q): %w; collect a tensor dump of this call first: msprobe task \"tensor\" with \"list\": [%q], \"step\": [%d], \"rank\": [%d] (nanhunt plan writes such a config)",
			b.df.Path, b.target.Name, task, ErrStatisticsOnly, b.c.API, b.c.Step, b.c.Rank)
	}
	for i, t := range b.inputs {
		t.Var = "t" + strconv.Itoa(i)
	}
	for i, t := range b.grads {
		t.Var = "g" + strconv.Itoa(i)
	}
	for _, t := range append(append([]*TensorRef(nil), b.inputs...), b.grads...) {
		if t.DataName == "" {
			return fmt.Errorf("%s: %s of %s has no data_name: its tensor was not saved", b.df.Path, t.Position(), t.Entry)
		}
	}
	if b.c.Call.Kind == CallMethod && b.receiver() == nil {
		return fmt.Errorf("%s: %s is a Tensor method but its entry holds no first argument (input_args is empty)", b.df.Path, b.target.Name)
	}
	for _, a := range b.fwd.Args {
		if a.Field == "input_kwargs" && a.Key == "inplace" && a.Value.Kind == KindBool && a.Value.Bool {
			b.c.Call.InPlace = true
		}
	}
	b.c.Runnable = b.c.Call.Kind == CallFunction || b.c.Call.Kind == CallMethod
	for _, a := range b.fwd.Args {
		if a.Value.Kind != KindTensor {
			b.c.Arguments = append(b.c.Arguments, a)
		}
		if note := a.Value.Note(); note != "" {
			b.c.Warnings = append(b.c.Warnings, a.Position()+": "+note)
		}
	}
	return nil
}

// receiver is the argument a Tensor method is called on: input_args.0, or
// a "self" or "input" keyword.
func (b *builder) receiver() *Argument {
	for i, a := range b.fwd.Args {
		if a.Index == 0 {
			return &b.fwd.Args[i]
		}
	}
	for i, a := range b.fwd.Args {
		if a.Field == "input_kwargs" && (a.Key == "self" || a.Key == "input") {
			return &b.fwd.Args[i]
		}
	}
	return nil
}

// locate finds the saved file of every tensor the case loads, in the rank
// folder's dump_tensor_data or in the header's dump_data_dir, and only
// inside the dump folder: a dump_data_dir outside it is not followed, and a
// file that leads outside it (a symbolic link) is refused.
func (b *builder) locate(d *dumpFolder) error {
	seen := map[string]bool{}
	for _, t := range append(append([]*TensorRef(nil), b.inputs...), b.grads...) {
		name := filepath.Base(strings.ReplaceAll(t.DataName, "\\", "/"))
		if name == "." || name == ".." || name == "/" || name == CaseJSON || name == ReproPy || strings.ContainsRune(name, 0) {
			return fmt.Errorf("%s: %s of %s: data_name %q is not a file name", b.df.Path, t.Position(), t.Entry, t.DataName)
		}
		t.File = name
		if err := b.find(d, t); err != nil {
			return err
		}
		if !seen[name] {
			seen[name] = true
			b.files = append(b.files, t)
			b.c.Files = append(b.c.Files, name)
		}
	}
	return nil
}

// find sets t.Source to the first place its file is found.
func (b *builder) find(d *dumpFolder, t *TensorRef) error {
	var tried, outside []string
	for _, dir := range b.dataDirs() {
		p := filepath.Join(dir, t.File)
		rel, in := d.rel(p)
		if !in {
			outside = append(outside, dir)
			continue
		}
		tried = append(tried, p)
		f, _, err := d.open(rel)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("tensor file %s (%s of %s): %w", t.File, t.Position(), t.Entry, err)
		}
		f.Close()
		t.Source, t.rel = p, rel
		return nil
	}
	msg := fmt.Sprintf("tensor file %s (%s of %s) not found: looked for %s", t.File, t.Position(), t.Entry, strings.Join(tried, " and "))
	if len(outside) > 0 {
		msg += fmt.Sprintf("; the header's dump_data_dir %s lies outside the dump folder %s and is not followed: tensor files are copied only from inside it", strings.Join(outside, " and "), d.abs)
	}
	return fmt.Errorf("%s: %w", msg, os.ErrNotExist)
}

// dataDirs are the folders a tensor file may be in: dump_tensor_data next
// to dump.json, then the header's dump_data_dir (relative to dump.json's
// folder when it is not absolute).
func (b *builder) dataDirs() []string {
	dirs := []string{filepath.Join(b.dir, "dump_tensor_data")}
	if dd := b.df.Header.DumpDataDir; dd != "" && !strings.ContainsRune(dd, 0) {
		if !filepath.IsAbs(dd) {
			dd = filepath.Join(b.dir, dd)
		}
		if filepath.Clean(dd) != filepath.Clean(dirs[0]) {
			dirs = append(dirs, dd)
		}
	}
	return dirs
}

// copyTensor copies a tensor file into the case, with at most the
// source's permissions (and at most 0644), and checks the copy: a file
// that repro.py could only load by unpickling code is refused, naming the
// file in the dump.
func (b *builder) copyTensor(ctx context.Context, d *dumpFolder, w *caseWriter, t *TensorRef) error {
	src, info, err := d.open(t.rel)
	if err != nil {
		return fmt.Errorf("tensor file %s (%s of %s): %w", t.File, t.Position(), t.Entry, err)
	}
	defer src.Close()
	var refused error
	err = w.add(t.File, info.Mode().Perm()&0o644, func(f *os.File) error {
		if err := copyTo(ctx, f, src, t.Source); err != nil {
			return err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		refused = checkTensorFile(f, t.File)
		return refused
	})
	if refused != nil {
		return fmt.Errorf("tensor file %s (%s of %s) refused: %w; not copied", t.Source, t.Position(), t.Entry, refused)
	}
	return err
}
