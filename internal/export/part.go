package export

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nanhunt/nanhunt/internal/parquetwrite"

	"github.com/nanhunt/nanhunt/dump"
)

// Parquet writer settings: row groups of 64Ki rows (enough for readers to
// skip by statistics and to split work), pages of 64 KiB before
// compression, gzip (the codec every Parquet reader has), strings
// dictionary-encoded. The writer holds one row group's compressed pages, a
// few MB per file being written.
const (
	rowGroupRows   = 64 << 10
	pageBufferSize = 64 << 10
)

// parquetColumns are Columns as the writer takes them.
var parquetColumns = func() []parquetwrite.Column {
	kinds := map[string]parquetwrite.Kind{
		"INTEGER": parquetwrite.Int32, "BIGINT": parquetwrite.Int64, "DOUBLE": parquetwrite.Double,
		"BOOLEAN": parquetwrite.Bool, "VARCHAR": parquetwrite.String, "BIGINT[]": parquetwrite.Int64List,
	}
	cols := make([]parquetwrite.Column, len(Columns))
	for i, c := range Columns {
		k, ok := kinds[c.Type]
		if !ok {
			panic("export: column " + c.Name + " has no Parquet kind for " + c.Type)
		}
		// strings repeat from row to row: the names of an entry's tensors, and
		// a few dtypes, fields and classes
		cols[i] = parquetwrite.Column{Name: c.Name, Kind: k, Optional: c.Nullable, Dictionary: k == parquetwrite.String}
	}
	return cols
}()

// part is one file being written. It is written under a temporary name
// and renamed when complete, so a reader never sees half a file.
type part struct {
	path, tmp string
	f         *os.File
	enc       encoder
	b         *batch
	rows      int64
}

// createPart starts the file at path, in format, creating its folder.
func createPart(path string, format Format) (*part, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create output folder: %w", err)
	}
	p := &part{path: path, tmp: path + ".partial"}
	f, err := os.Create(p.tmp)
	if err != nil {
		return nil, fmt.Errorf("create output file: %w", err)
	}
	p.f = f
	if p.enc, err = newEncoder(format, f); err != nil {
		f.Close()
		os.Remove(p.tmp)
		return nil, fmt.Errorf("write %s: %w", p.path, err)
	}
	p.b = batches.Get().(*batch)
	return p, nil
}

// add appends the row of one tensor, writing the batch when it is full.
func (p *part) add(ei *entryInfo, t *dump.Tensor) error {
	p.b.add(ei, t)
	if p.b.full() {
		return p.flush()
	}
	return nil
}

func (p *part) flush() error {
	if len(p.b.rows) == 0 {
		return nil
	}
	for i := range p.b.rows {
		if err := p.enc.row(&p.b.rows[i]); err != nil {
			return fmt.Errorf("write %s: %w", p.path, err)
		}
	}
	p.rows += int64(len(p.b.rows))
	p.b.reset()
	return nil
}

// close writes the remaining rows, the Parquet footer with the given
// key/value metadata, and moves the file to its final name. It returns the
// size written.
func (p *part) close(meta [][2]string) (int64, error) {
	if err := p.flush(); err != nil {
		return 0, err
	}
	p.release()
	if err := p.enc.finish(meta); err != nil {
		return 0, fmt.Errorf("write %s: %w", p.path, err)
	}
	if err := p.f.Close(); err != nil {
		return 0, fmt.Errorf("write %s: %w", p.path, err)
	}
	if err := os.Rename(p.tmp, p.path); err != nil {
		return 0, fmt.Errorf("write %s: %w", p.path, err)
	}
	info, err := os.Stat(p.path)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", p.path, err)
	}
	return info.Size(), nil
}

// abort drops the file.
func (p *part) abort() {
	p.release()
	p.f.Close()
	os.Remove(p.tmp)
}

// release returns the batch to the pool.
func (p *part) release() {
	if p.b != nil {
		p.b.reset()
		batches.Put(p.b)
		p.b = nil
	}
}

// parquetEncoder writes rows to a Parquet file.
type parquetEncoder struct{ w *parquetwrite.Writer }

func newParquetEncoder(w io.Writer) *parquetEncoder {
	return &parquetEncoder{parquetwrite.NewWriter(w, parquetColumns, parquetwrite.Options{
		RowGroupRows: rowGroupRows, PageBytes: pageBufferSize, CreatedBy: "nanhunt",
	})}
}

func (e *parquetEncoder) row(r *Row) error { return writeRow(e.w, r) }

// finish writes the footer with meta as its key/value metadata.
func (e *parquetEncoder) finish(meta [][2]string) error {
	for _, kv := range meta {
		e.w.SetMetadata(kv[0], kv[1])
	}
	return e.w.Close()
}

// writeRow writes one row, its values in the order of Columns.
func writeRow(w *parquetwrite.Writer, r *Row) error {
	w.Int32(0, r.Step)
	w.Int32(1, r.Rank)
	w.Int32(2, r.EntryIndex)
	w.String(3, r.EntryName)
	w.String(4, r.API)
	w.String(5, r.Direction)
	w.Bool(6, r.Module)
	w.String(7, r.Field)
	w.String(8, r.Slot)
	w.String(9, r.Dtype)
	if r.Shape != nil {
		w.Int64s(10, r.Shape)
	} else {
		w.Null(10)
	}
	optInt(w, 11, r.Numel)
	for i, v := range [4]*float64{r.Max, r.Min, r.Mean, r.Norm} {
		optDouble(w, 12+i, v)
	}
	w.String(16, r.Nonfinite)
	w.Bool(17, r.RequiresGrad)
	return w.EndRow()
}

func optInt(w *parquetwrite.Writer, c int, v *int64) {
	if v == nil {
		w.Null(c)
		return
	}
	w.Int64(c, *v)
}

func optDouble(w *parquetwrite.Writer, c int, v *float64) {
	if v == nil {
		w.Null(c)
		return
	}
	w.Double(c, *v)
}
