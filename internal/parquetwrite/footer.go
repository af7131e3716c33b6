package parquetwrite

import "encoding/binary"

// Parquet enumerations, as the format's Thrift definitions number them.
const (
	repRequired = 0
	repOptional = 1
	repRepeated = 2

	convertedUTF8 = 0
	convertedList = 3

	encPlain         = 0
	encRLE           = 3
	encRLEDictionary = 8

	codecNone = 0
	codecGzip = 2
)

// pageHeader is the Thrift PageHeader of a data page (version 1) holding
// n level entries, raw bytes before compression and size after, its
// values in encoding enc.
func pageHeader(raw, size, n int, enc int32) []byte {
	return header(0, raw, size, 5, func(t *thrift) { // DATA_PAGE, data_page_header
		t.i32(1, int32(n))
		t.i32(2, enc)
		t.i32(3, encRLE)
		t.i32(4, encRLE)
	})
}

// dictPageHeader is the Thrift PageHeader of a dictionary page of n
// PLAIN-encoded values.
func dictPageHeader(raw, size, n int) []byte {
	return header(2, raw, size, 7, func(t *thrift) { // DICTIONARY_PAGE, dictionary_page_header
		t.i32(1, int32(n))
		t.i32(2, encPlain)
	})
}

// header is a PageHeader of the given page type and sizes, with its
// type's header struct in field id, written by body.
func header(typ int32, raw, size int, id int16, body func(*thrift)) []byte {
	t := thrift{}
	t.begin()
	t.i32(1, typ)
	t.i32(2, int32(raw))
	t.i32(3, int32(size))
	t.structField(id)
	body(&t)
	t.end()
	t.end()
	return t.b
}

// footer is the Thrift FileMetaData of the file.
func (w *Writer) footer() []byte {
	t := thrift{}
	t.begin()
	t.i32(1, 1) // version
	w.schema(&t)
	t.i64(3, w.rows)
	t.list(4, tStruct, len(w.groups))
	for _, g := range w.groups {
		w.rowGroup(&t, g)
	}
	if len(w.meta) > 0 {
		t.list(5, tStruct, len(w.meta))
		for _, kv := range w.meta {
			t.begin()
			t.str(1, kv[0])
			t.str(2, kv[1])
			t.end()
		}
	}
	if w.opt.CreatedBy != "" {
		t.str(6, w.opt.CreatedBy)
	}
	// column_orders: every column's statistics follow its type's order
	t.list(7, tStruct, len(w.cols))
	for range w.cols {
		t.begin()
		t.structField(1) // TYPE_ORDER
		t.end()
		t.end()
	}
	t.end()
	return t.b
}

// schema writes the schema: the root, then each column, a list column as
// the three levels of the LIST convention (name, repeated "list",
// required "element").
func (w *Writer) schema(t *thrift) {
	n := 1
	for _, c := range w.cols {
		n++
		if c.Kind == Int64List {
			n += 2
		}
	}
	t.list(2, tStruct, n)
	t.begin()
	t.str(4, "schema")
	t.i32(5, int32(len(w.cols)))
	t.end()
	for _, c := range w.cols {
		if c.Kind == Int64List {
			t.begin()
			t.i32(3, repOptional)
			t.str(4, c.Name)
			t.i32(5, 1)
			t.i32(6, convertedList)
			t.structField(10)
			t.structField(3) // LIST
			t.end()
			t.end()
			t.end()
			t.begin()
			t.i32(3, repRepeated)
			t.str(4, "list")
			t.i32(5, 1)
			t.end()
			t.begin()
			t.i32(1, c.Kind.physical())
			t.i32(3, repRequired)
			t.str(4, "element")
			t.end()
			continue
		}
		t.begin()
		t.i32(1, c.Kind.physical())
		rep := int32(repRequired)
		if c.Optional {
			rep = repOptional
		}
		t.i32(3, rep)
		t.str(4, c.Name)
		if c.Kind == String {
			t.i32(6, convertedUTF8)
			t.structField(10)
			t.structField(1) // STRING
			t.end()
			t.end()
		}
		t.end()
	}
}

func (w *Writer) rowGroup(t *thrift, g rowGroup) {
	t.begin()
	t.list(1, tStruct, len(g.chunks))
	for i, ch := range g.chunks {
		c := w.cols[i]
		t.begin()
		t.i64(2, ch.offset)
		t.structField(3)
		t.i32(1, c.Kind.physical())
		encs := []int32{encPlain, encRLE}
		if ch.dict {
			encs = append(encs, encRLEDictionary)
		}
		t.list(2, tI32, len(encs))
		for _, e := range encs {
			t.listI32(e)
		}
		path := []string{c.Name}
		if c.Kind == Int64List {
			path = append(path, "list", "element")
		}
		t.list(3, tBinary, len(path))
		for _, p := range path {
			t.bytes([]byte(p))
		}
		codec := int32(codecGzip)
		if w.opt.Stored {
			codec = codecNone
		}
		t.i32(4, codec)
		t.i64(5, ch.values)
		t.i64(6, ch.rawSize)
		t.i64(7, ch.size)
		t.i64(9, ch.dataOffset)
		if ch.dictOffset >= 0 {
			t.i64(11, ch.dictOffset)
		}
		if c.Kind != Int64List {
			t.structField(12)
			t.i64(3, ch.nulls)
			if ch.hasMinMax {
				t.binary(5, plain(c.Kind, ch.hi))
				t.binary(6, plain(c.Kind, ch.lo))
			}
			t.end()
		}
		t.end()
		t.end()
	}
	t.i64(2, g.rawSize)
	t.i64(3, g.rows)
	t.end()
}

// plain is an integer statistic PLAIN-encoded in its column's type.
func plain(k Kind, v int64) []byte {
	if k == Int32 {
		return binary.LittleEndian.AppendUint32(nil, uint32(int32(v)))
	}
	return binary.LittleEndian.AppendUint64(nil, uint64(v))
}
