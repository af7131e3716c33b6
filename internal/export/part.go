package export

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/nanhunt/nanhunt/dump"
)

// Writer settings: row groups of 64Ki rows (enough for readers to skip by
// statistics and to split work), pages of 64 KiB before encoding (what
// bounds the writer's memory, about 10 MB per file being written), zstd.
const (
	rowGroupRows   = 64 << 10
	pageBufferSize = 64 << 10
	partName       = "part-0.parquet"
)

// writerOptions are the Parquet writer's settings.
func writerOptions() []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(rowGroupRows),
		parquet.PageBufferSize(pageBufferSize),
	}
}

// part is one Parquet file being written. It is written under a temporary
// name and renamed when complete, so a reader never sees half a file.
type part struct {
	path, tmp string
	f         *os.File
	w         *parquet.GenericWriter[Row]
	b         *batch
	rows      int64
}

// createPart starts the file at path, creating its folder.
func createPart(path string) (*part, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create output folder: %w", err)
	}
	p := &part{path: path, tmp: path + ".partial"}
	f, err := os.Create(p.tmp)
	if err != nil {
		return nil, fmt.Errorf("create output file: %w", err)
	}
	p.f = f
	p.w = parquet.NewGenericWriter[Row](f, writerOptions()...)
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
	if _, err := p.w.Write(p.b.rows); err != nil {
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	p.rows += int64(len(p.b.rows))
	p.b.reset()
	return nil
}

// close writes the remaining rows, the footer with the given key/value
// metadata, and moves the file to its final name. It returns the size
// written.
func (p *part) close(meta [][2]string) (int64, error) {
	if err := p.flush(); err != nil {
		return 0, err
	}
	p.release()
	for _, kv := range meta {
		p.w.SetKeyValueMetadata(kv[0], kv[1])
	}
	if err := p.w.Close(); err != nil {
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
