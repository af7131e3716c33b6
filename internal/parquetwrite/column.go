package parquetwrite

import (
	"encoding/binary"
	"math"
)

// Kind is the type of a column's values.
type Kind uint8

const (
	Bool      Kind = iota // BOOLEAN
	Int32                 // INT32
	Int64                 // INT64
	Double                // DOUBLE
	String                // BYTE_ARRAY, logical type STRING
	Int64List             // a LIST of required INT64 elements
)

// physical is the Parquet physical type of a kind's values.
func (k Kind) physical() int32 {
	switch k {
	case Bool:
		return 0
	case Int32:
		return 1
	case Int64, Int64List:
		return 2
	case Double:
		return 5
	}
	return 6 // BYTE_ARRAY
}

// Column is one column of a file. A list column is always optional: a null
// list and an empty list are told apart. A String column with Dictionary
// set is dictionary-encoded: each row group's distinct values are written
// once, in a dictionary page, and the data pages hold their indices; past
// maxDictBytes of distinct values, the rest of the row group is PLAIN.
type Column struct {
	Name       string
	Kind       Kind
	Optional   bool
	Dictionary bool
}

// maxDictBytes bounds a row group's dictionary of one column (what
// parquet-mr writes by default, too).
const maxDictBytes = 1 << 20

// column is a column being written: its open page and the finished pages
// of the current row group.
type column struct {
	Column
	maxDef, maxRep uint8

	// the open page
	values  []byte  // PLAIN-encoded values
	defs    []uint8 // definition levels, when maxDef > 0
	reps    []uint8 // repetition levels, when maxRep > 0
	entries int     // level entries (values and nulls) in the page
	bits    uint8   // booleans packed into the last byte of values
	set     bool    // this row's value is given

	// dictionary encoding (Dictionary columns), per row group
	dict      map[string]uint32
	dictPlain []byte   // the dictionary's values, PLAIN-encoded
	idx       []uint32 // the open page's values, as indices into the dictionary
	plain     bool     // the dictionary is full: the rest of the row group is PLAIN
	usedDict  bool     // a data page of the chunk holds indices

	// the row group's chunk
	chunk       []byte // page headers and (compressed) pages
	chunkValues int64  // level entries
	rawSize     int64  // uncompressed size, headers included
	nulls       int64
	hasMinMax   bool
	lo, hi      int64 // of Int32 and Int64 values
}

func newColumn(c Column) *column {
	col := &column{Column: c}
	if c.Kind == Int64List {
		col.Optional = true
		col.maxDef, col.maxRep = 2, 1
	} else if c.Optional {
		col.maxDef = 1
	}
	return col
}

func (c *column) present() {
	if c.maxDef > 0 {
		c.defs = append(c.defs, c.maxDef)
	}
	if c.maxRep > 0 {
		c.reps = append(c.reps, 0)
	}
	c.entries++
}

func (c *column) minMax(v int64) {
	if !c.hasMinMax {
		c.lo, c.hi, c.hasMinMax = v, v, true
		return
	}
	c.lo, c.hi = min(c.lo, v), max(c.hi, v)
}

func (c *column) putBool(v bool) {
	if c.bits == 0 {
		c.values = append(c.values, 0)
	}
	if v {
		c.values[len(c.values)-1] |= 1 << c.bits
	}
	c.bits = (c.bits + 1) & 7
	c.present()
}

func (c *column) putInt32(v int32) {
	c.values = binary.LittleEndian.AppendUint32(c.values, uint32(v))
	c.minMax(int64(v))
	c.present()
}

func (c *column) putInt64(v int64) {
	c.values = binary.LittleEndian.AppendUint64(c.values, uint64(v))
	c.minMax(v)
	c.present()
}

func (c *column) putDouble(v float64) {
	c.values = binary.LittleEndian.AppendUint64(c.values, math.Float64bits(v))
	c.present()
}

// putIndex writes v as its dictionary index, adding it to the dictionary;
// false when the dictionary has no room for it.
func (c *column) putIndex(v string) bool {
	i, ok := c.dict[v]
	if !ok {
		if len(c.dictPlain)+4+len(v) > maxDictBytes {
			return false
		}
		if c.dict == nil {
			c.dict = map[string]uint32{}
		}
		i = uint32(len(c.dict))
		c.dict[v] = i
		c.dictPlain = binary.LittleEndian.AppendUint32(c.dictPlain, uint32(len(v)))
		c.dictPlain = append(c.dictPlain, v...)
	}
	c.idx = append(c.idx, i)
	c.present()
	return true
}

// dictPage reports whether the open page is dictionary-encoded.
func (c *column) dictPage() bool { return c.Dictionary && !c.plain }

func (c *column) putString(v string) {
	c.values = binary.LittleEndian.AppendUint32(c.values, uint32(len(v)))
	c.values = append(c.values, v...)
	c.present()
}

func (c *column) putNull() {
	c.defs = append(c.defs, 0)
	if c.maxRep > 0 {
		c.reps = append(c.reps, 0)
	}
	c.entries++
	c.nulls++
}

// putList writes one list: an empty list is defined at level 1, each
// element at level 2, the elements after the first repeated at level 1.
func (c *column) putList(v []int64) {
	if len(v) == 0 {
		c.defs = append(c.defs, 1)
		c.reps = append(c.reps, 0)
		c.entries++
		return
	}
	for i, x := range v {
		c.values = binary.LittleEndian.AppendUint64(c.values, uint64(x))
		c.minMax(x)
		c.defs = append(c.defs, 2)
		c.reps = append(c.reps, min(uint8(i), 1))
		c.entries++
	}
}

// pageBytes is the open page's size before encoding the levels.
func (c *column) pageBytes() int { return len(c.values) + len(c.defs) + len(c.reps) + 2*len(c.idx) }

// levelWidth is the bit width of levels up to max.
func levelWidth(max uint8) uint {
	w := uint(0)
	for max > 0 {
		w++
		max >>= 1
	}
	return w
}
