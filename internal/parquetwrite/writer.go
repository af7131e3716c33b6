package parquetwrite

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// Options are a file's settings; the zero value means the defaults.
type Options struct {
	RowGroupRows int    // rows per row group; 64Ki by default
	PageBytes    int    // a column's page is closed at the first row end past this many bytes; 64 KiB by default
	Stored       bool   // store the pages as they are rather than gzip them
	CreatedBy    string // the footer's created_by
}

// Writer writes one Parquet file. Give each column's value of a row with
// the setters (by column index), then call EndRow; Close writes the footer.
// A Writer is not safe for concurrent use.
type Writer struct {
	w       io.Writer
	opt     Options
	cols    []*column
	offset  int64 // bytes written to w
	rows    int64 // rows in the file
	groupN  int   // rows in the current row group
	groups  []rowGroup
	meta    [][2]string
	zbuf    bytes.Buffer
	zw      *gzip.Writer
	page    []byte // a page being assembled: levels and values
	err     error
	started bool
}

// rowGroup is the footer's record of a written row group.
type rowGroup struct {
	rows, rawSize int64
	chunks        []chunk
}

type chunk struct {
	offset, dictOffset, dataOffset int64 // dictOffset -1: no dictionary page
	values, rawSize, size, nulls   int64
	hasMinMax, dict                bool // dict: some data page holds dictionary indices
	lo, hi                         int64
}

// NewWriter starts a file with the given columns on w.
func NewWriter(w io.Writer, cols []Column, opt Options) *Writer {
	if opt.RowGroupRows <= 0 {
		opt.RowGroupRows = 64 << 10
	}
	if opt.PageBytes <= 0 {
		opt.PageBytes = 64 << 10
	}
	wr := &Writer{w: w, opt: opt}
	for _, c := range cols {
		wr.cols = append(wr.cols, newColumn(c))
	}
	if !opt.Stored {
		wr.zw, _ = gzip.NewWriterLevel(&wr.zbuf, gzip.BestSpeed)
	}
	return wr
}

// errWrongKind is a programming error: a setter of the wrong kind, or a
// value given twice in a row.
var errWrongKind = errors.New("parquetwrite: value of the wrong kind or given twice")

func (w *Writer) col(i int, k Kind) *column {
	c := w.cols[i]
	if c.Kind != k || c.set {
		w.fail(fmt.Errorf("%w: column %s", errWrongKind, c.Name))
	}
	c.set = true
	return c
}

func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

func (w *Writer) Bool(i int, v bool)      { w.col(i, Bool).putBool(v) }
func (w *Writer) Int32(i int, v int32)    { w.col(i, Int32).putInt32(v) }
func (w *Writer) Int64(i int, v int64)    { w.col(i, Int64).putInt64(v) }
func (w *Writer) Double(i int, v float64) { w.col(i, Double).putDouble(v) }
func (w *Writer) String(i int, v string) {
	c := w.col(i, String)
	if c.dictPage() {
		if c.putIndex(v) {
			return
		}
		w.closePage(c) // it holds indices; the rest of the row group is PLAIN
		c.plain = true
	}
	c.putString(v)
}
func (w *Writer) Int64s(i int, v []int64) { w.col(i, Int64List).putList(v) }

// Null gives an optional column no value in this row.
func (w *Writer) Null(i int) {
	c := w.cols[i]
	if !c.Optional || c.set {
		w.fail(fmt.Errorf("%w: null in column %s", errWrongKind, c.Name))
	}
	c.set = true
	c.putNull()
}

// SetMetadata adds a key/value pair to the footer.
func (w *Writer) SetMetadata(key, value string) { w.meta = append(w.meta, [2]string{key, value}) }

// EndRow ends a row in which every column has been given a value or a
// null; it closes full pages and writes a full row group.
func (w *Writer) EndRow() error {
	if w.err != nil {
		return w.err
	}
	for _, c := range w.cols {
		if !c.set {
			w.fail(fmt.Errorf("parquetwrite: row %d has no value in column %s", w.rows, c.Name))
			return w.err
		}
		c.set = false
		if c.pageBytes() >= w.opt.PageBytes {
			w.closePage(c)
		}
	}
	w.rows++
	w.groupN++
	if w.groupN >= w.opt.RowGroupRows {
		w.writeGroup()
	}
	return w.err
}

// closePage encodes the open page of c into its chunk.
func (w *Writer) closePage(c *column) {
	if c.entries == 0 || w.err != nil {
		return
	}
	p := w.page[:0]
	if c.maxRep > 0 {
		p = appendLevels(p, c.reps, levelWidth(c.maxRep))
	}
	if c.maxDef > 0 {
		p = appendLevels(p, c.defs, levelWidth(c.maxDef))
	}
	enc := int32(encPlain)
	if c.dictPage() {
		enc = encRLEDictionary
		c.usedDict = true
		width := uint(1) // a page of nulls only has no index
		if len(c.dict) > 1 {
			width = uint(bits.Len32(uint32(len(c.dict) - 1)))
		}
		p = append(p, byte(width))
		p = appendHybrid(p, c.idx, width)
	} else {
		p = append(p, c.values...)
	}
	w.page = p
	body := w.compress(p)
	if len(p) > math.MaxInt32 {
		w.fail(fmt.Errorf("parquetwrite: a page of column %s exceeds 2 GiB", c.Name))
		return
	}
	h := pageHeader(len(p), len(body), c.entries, enc)
	c.chunk = append(c.chunk, h...)
	c.chunk = append(c.chunk, body...)
	c.rawSize += int64(len(h) + len(p))
	c.chunkValues += int64(c.entries)
	c.values, c.defs, c.reps, c.idx = c.values[:0], c.defs[:0], c.reps[:0], c.idx[:0]
	c.entries, c.bits = 0, 0
}

// compress gzips a page, unless the pages are stored; the result is valid
// until the next call.
func (w *Writer) compress(p []byte) []byte {
	if w.zw == nil {
		return p
	}
	w.zbuf.Reset()
	w.zw.Reset(&w.zbuf)
	w.zw.Write(p) // writes to a bytes.Buffer cannot fail
	w.zw.Close()
	return w.zbuf.Bytes()
}

// writeGroup writes the current row group, column chunk after column chunk.
func (w *Writer) writeGroup() {
	if w.groupN == 0 || w.err != nil {
		return
	}
	if !w.started {
		w.write([]byte("PAR1"))
		w.started = true
	}
	g := rowGroup{rows: int64(w.groupN)}
	for _, c := range w.cols {
		w.closePage(c)
		ch := chunk{offset: w.offset, dictOffset: -1, values: c.chunkValues, rawSize: c.rawSize,
			nulls: c.nulls, hasMinMax: c.hasMinMax, lo: c.lo, hi: c.hi, dict: c.usedDict}
		if c.usedDict {
			// the dictionary page comes first in the chunk
			body := w.compress(c.dictPlain)
			h := dictPageHeader(len(c.dictPlain), len(body), len(c.dict))
			ch.dictOffset = w.offset
			w.write(h)
			w.write(body)
			ch.rawSize += int64(len(h) + len(c.dictPlain))
		}
		ch.dataOffset = w.offset
		w.write(c.chunk)
		ch.size = w.offset - ch.offset
		g.chunks = append(g.chunks, ch)
		g.rawSize += c.rawSize
		c.chunk, c.chunkValues, c.rawSize, c.nulls, c.hasMinMax = c.chunk[:0], 0, 0, 0, false
		clear(c.dict)
		c.dictPlain, c.plain, c.usedDict = c.dictPlain[:0], false, false
	}
	w.groups = append(w.groups, g)
	w.groupN = 0
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(b)
	w.offset += int64(n)
	if err != nil {
		w.fail(fmt.Errorf("parquetwrite: %w", err))
	}
}

// Close writes the last row group and the footer. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	for _, c := range w.cols {
		if c.set {
			return fmt.Errorf("parquetwrite: the last row has no EndRow (column %s)", c.Name)
		}
	}
	w.writeGroup()
	if !w.started {
		w.write([]byte("PAR1"))
	}
	footer := w.footer()
	w.write(footer)
	w.write(binary.LittleEndian.AppendUint32(nil, uint32(len(footer))))
	w.write([]byte("PAR1"))
	return w.err
}

// Rows is the number of rows ended so far.
func (w *Writer) Rows() int64 { return w.rows }
