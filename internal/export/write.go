package export

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"

	"github.com/nanhunt/nanhunt/internal/safeio"

	"github.com/nanhunt/nanhunt/dump"
)

// FileResult is what happened to one dump.json.
type FileResult struct {
	Mode         string `json:"mode,omitempty"`
	Step         int    `json:"step"`
	Rank         int    `json:"rank"`
	Source       string `json:"source"`         // the dump.json read
	Path         string `json:"path,omitempty"` // the file written, relative to the output folder, with slashes; "" when none was written
	Entries      int64  `json:"entries"`
	Rows         int64  `json:"rows"`
	BytesRead    int64  `json:"bytes_read"`
	BytesWritten int64  `json:"bytes_written"`

	// Damage is set when dump.json is damaged: the rows before it were
	// written. OpenErr is set when it could not be opened: nothing was.
	Damage  *dump.FormatError `json:"-"`
	OpenErr error             `json:"-"`
}

// partDir is the Hive-style folder of a rank's file, relative to the output.
func partDir(d dump.RankDir) string {
	p := filepath.Join("step="+strconv.Itoa(d.Step), "rank="+strconv.Itoa(d.Rank))
	if d.Mode != "" {
		p = filepath.Join("mode="+d.Mode, p)
	}
	return p
}

// exportFile converts one dump.json into out/partDir/part-0.parquet (or
// .csv). Damage and open failures of dump.json are recorded in the result;
// only a failure to write, or cancellation, is an error.
func exportFile(ctx context.Context, d dump.RankDir, out string, format Format, version string) (FileResult, error) {
	res := FileResult{Mode: d.Mode, Step: d.Step, Rank: d.Rank, Source: d.Dump}
	in, err := safeio.Open(d.Dump)
	if err != nil {
		res.OpenErr = err
		return res, nil
	}
	defer in.Close()
	var size int64
	if info, err := in.Stat(); err == nil {
		size = info.Size()
	}
	rd := dump.NewReader(in, dump.ReaderOptions{Details: true, WindowSize: windowFor(size)})
	more := rd.Next()
	if !more && rd.Err() != nil {
		// nothing before the damage: no file rather than an empty one
		res.BytesRead = rd.Offset()
		res.Damage = formatError(rd)
		return res, nil
	}

	rel := filepath.Join(partDir(d), format.partName())
	p, err := createPart(filepath.Join(out, rel), format)
	if err != nil {
		removeEmptyFolders(filepath.Dir(filepath.Join(out, rel)), out)
		return res, err
	}
	if err := copyRows(ctx, rd, more, p, d, &res); err != nil {
		p.abort()
		removeEmptyFolders(filepath.Dir(p.path), out)
		return res, err
	}
	res.BytesRead = rd.Offset()
	source, _ := filepath.Abs(d.Dump)
	meta := [][2]string{{"nanhunt.source", source}, {"nanhunt.version", version}}
	if rd.Err() != nil {
		res.Damage = formatError(rd)
		meta = append(meta, [2]string{"nanhunt.damage", res.Damage.Error()})
	}
	if res.BytesWritten, err = p.close(meta); err != nil {
		p.abort()
		removeEmptyFolders(filepath.Dir(p.path), out)
		return res, err
	}
	res.Rows = p.rows
	res.Path = filepath.ToSlash(rel)
	return res, nil
}

// copyRows writes the rows of every entry the reader yields; more says
// whether the reader already holds the first one.
func copyRows(ctx context.Context, rd *dump.Reader, more bool, p *part, d dump.RankDir, res *FileResult) error {
	for ; more; more = rd.Next() {
		if res.Entries&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		e := rd.Entry()
		res.Entries++
		if len(e.Tensors) == 0 {
			continue
		}
		ei := entryOf(d.Step, d.Rank, e)
		for i := range e.Tensors {
			if err := p.add(&ei, &e.Tensors[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// windowFor sizes the read window: the whole file when small, 1 MiB at most.
func windowFor(size int64) int {
	const lo, hi = 16 << 10, 1 << 20
	return int(min(max(size+1, lo), hi))
}

// formatError is the reader's error as a *dump.FormatError.
func formatError(rd *dump.Reader) *dump.FormatError {
	var fe *dump.FormatError
	if !errors.As(rd.Err(), &fe) {
		fe = &dump.FormatError{Offset: rd.Offset(), Err: rd.Err()}
	}
	return fe
}
