package parquetwrite

import "encoding/binary"

// Thrift compact protocol types, as Parquet's footer and page headers use
// them.
const (
	tBool   = 1 // true; false is 2
	tI32    = 5
	tI64    = 6
	tBinary = 8
	tList   = 9
	tStruct = 12
)

// thrift encodes one Thrift compact-protocol message. Structs nest by
// begin/end, which keep the last field id of each level.
type thrift struct {
	b    []byte
	last []int16 // last field id, one per open struct
}

func (t *thrift) field(id int16, typ byte) {
	top := &t.last[len(t.last)-1]
	if d := id - *top; d > 0 && d <= 15 {
		t.b = append(t.b, byte(d)<<4|typ)
	} else {
		t.b = append(t.b, typ)
		t.b = binary.AppendVarint(t.b, int64(id))
	}
	*top = id
}

func (t *thrift) begin() { t.last = append(t.last, 0) }

func (t *thrift) end() {
	t.b = append(t.b, 0)
	t.last = t.last[:len(t.last)-1]
}

func (t *thrift) i32(id int16, v int32) {
	t.field(id, tI32)
	t.b = binary.AppendVarint(t.b, int64(v))
}

func (t *thrift) i64(id int16, v int64) {
	t.field(id, tI64)
	t.b = binary.AppendVarint(t.b, v)
}

func (t *thrift) binary(id int16, v []byte) {
	t.field(id, tBinary)
	t.bytes(v)
}

func (t *thrift) str(id int16, v string) {
	t.field(id, tBinary)
	t.b = binary.AppendUvarint(t.b, uint64(len(v)))
	t.b = append(t.b, v...)
}

func (t *thrift) bytes(v []byte) {
	t.b = binary.AppendUvarint(t.b, uint64(len(v)))
	t.b = append(t.b, v...)
}

// structField opens a struct-valued field; close it with end.
func (t *thrift) structField(id int16) {
	t.field(id, tStruct)
	t.begin()
}

// list writes a list field's header: n elements of type typ follow.
func (t *thrift) list(id int16, typ byte, n int) {
	t.field(id, tList)
	t.listHeader(typ, n)
}

func (t *thrift) listHeader(typ byte, n int) {
	if n < 15 {
		t.b = append(t.b, byte(n)<<4|typ)
		return
	}
	t.b = append(t.b, 0xf0|typ)
	t.b = binary.AppendUvarint(t.b, uint64(n))
}

// listI32 appends one i32 element of a list.
func (t *thrift) listI32(v int32) { t.b = binary.AppendVarint(t.b, int64(v)) }
