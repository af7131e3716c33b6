package msprobewrite

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/nanhunt/nanhunt/internal/synth/spec"
)

// ApplyDamage rewrites, truncates and removes the files of the run in dir
// as damage asks; rankDir names the folder of a rank, cuts are the
// truncation offsets of dump.json by step and rank.
func ApplyDamage(dir string, damage []spec.Damage, rankDir func(rank int) string, cuts map[[2]int]int64) error {
	for _, d := range damage {
		rdir := filepath.Join(dir, "step"+strconv.Itoa(d.Step), rankDir(d.Rank))
		if d.Kind != "" {
			if err := emptyDump(filepath.Join(rdir, "dump.json"), d.Kind); err != nil {
				return fmt.Errorf("synth: damage: %w", err)
			}
		}
		if cut, ok := cuts[[2]int{d.Step, d.Rank}]; ok {
			if err := os.Truncate(filepath.Join(rdir, "dump.json"), cut); err != nil {
				return fmt.Errorf("synth: damage: %w", err)
			}
		}
		if d.DropStack {
			if err := os.Remove(filepath.Join(rdir, "stack.json")); err != nil {
				return fmt.Errorf("synth: damage: %w", err)
			}
		}
		if d.DropConstruct {
			if err := os.Remove(filepath.Join(rdir, "construct.json")); err != nil {
				return fmt.Errorf("synth: damage: %w", err)
			}
		}
	}
	return nil
}

// emptyDump rewrites a dump.json so that it holds no entry that can be
// read, the way kind says (see Damage.Kind).
func emptyDump(path, kind string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	const open = `"data": {`
	i := bytes.Index(b, []byte(open))
	if i < 0 {
		return errors.New("no data member in " + path)
	}
	head := bytes.TrimRight(b[:i], " \n")
	var out []byte
	switch kind {
	case "empty-data":
		out = append(append(slices.Clone(b[:i]), `"data": {}`...), "\n}"...)
	case "no-data":
		out = append(bytes.TrimSuffix(slices.Clone(head), []byte(",")), "\n}"...)
	case "dup-data":
		end := bytes.LastIndexByte(b, '}')
		out = append(append(slices.Clone(bytes.TrimRight(b[:end], " \n")), ",\n "+`"data": {}`...), "\n}"...)
	case "cut-header":
		out = b[:min(len(b), i+len(open)+12)]
	default:
		return fmt.Errorf("unknown damage kind %q", kind)
	}
	return os.WriteFile(path, out, 0o644)
}
