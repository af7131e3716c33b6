package msprobewrite

import (
	"hash/crc32"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/nanhunt/nanhunt/internal/synth/spec"
)

// Values of dump entries: one of the types below or a TensorValue. A nil
// value is JSON null.
type (
	arg       = any
	Int       int64
	Float     float64
	Str       string
	Bool      bool
	DTypeName string // kwarg dtype: {"type": "torch.dtype", "value": ...}
	ReduceOp  string // {"type": "torch.distributed.ReduceOp", "value": ...}
	Size      []int  // {"type": "torch.Size", "value": [...]}
	List      []arg
	IntList   []int // a Python list of ints: [{"type": "int", ...}, ...]
)

// Group is a ProcessGroup argument: its ranks, ascending, and its id
// (GroupID).
type Group struct {
	Ranks []int
	ID    string
}

// KV is a keyword argument or a named parameter.
type KV struct {
	Key   string
	Value arg
}

// jsonOut writes JSON the way Python's json.dump(obj, f, indent=N) does.
// Output is appended to one large buffer that is written to the file when
// it passes the flush size; a jsonOut without a file counts the bytes and
// drops them (dry runs that measure a spec).
type jsonOut struct {
	f       *os.File
	o       *OutSizes
	b       []byte // pending output
	flushed int64  // bytes already handed to the file
	err     error  // first write error
	ind     int
	pad     []byte
	strNF   bool
	grp     string
	keys    [4]string // the statistics keys as written
	statStr bool      // finite statistics as numeric strings
	cache   tensorCache
}

// OutSizes are the buffer and cache sizes of the files of one run. Every
// rank has a dump.json open at the same time, so a memory budget is shared
// out over the ranks: 1 MiB buffers (few, large writes) and 1024 cached
// tensors per file up to 64 ranks, less beyond (64 KiB and 64 tensors at
// 1,024 ranks).
type OutSizes struct {
	flushAt    int
	cacheSlots int
	pool       sync.Pool
}

const (
	maxFlushAt    = 1 << 20
	minFlushAt    = 64 << 10
	flushHeadroom = 16 << 10 // room for the line being written when the buffer passes flushAt
	outBudget     = 64 << 20
	maxCacheSlots = 1024
	minCacheSlots = 64
)

// NewOutSizes returns the sizes for a run of ranks ranks.
func NewOutSizes(ranks int) *OutSizes {
	per := outBudget / max(ranks, 1)
	o := &OutSizes{flushAt: min(max(per, minFlushAt), maxFlushAt), cacheSlots: maxCacheSlots}
	for o.cacheSlots > minCacheSlots && o.cacheSlots*512 > per/2 {
		o.cacheSlots /= 2
	}
	o.pool.New = func() any {
		b := make([]byte, 0, o.flushAt+flushHeadroom)
		return &b
	}
	return o
}

// newJSONOut creates path; an empty path makes a jsonOut that only counts.
func newJSONOut(path string, f *spec.Format, o *OutSizes) (*jsonOut, error) {
	var fh *os.File
	if path != "" {
		var err error
		if fh, err = os.Create(path); err != nil {
			return nil, err
		}
	}
	j := &jsonOut{f: fh, o: o, ind: f.Indent, strNF: f.NonFinite == "string", grp: f.Groups,
		keys: statKeys(f), statStr: f.StatStrings}
	j.b = (*o.pool.Get().(*[]byte))[:0]
	j.pad = make([]byte, 1+24*j.ind)
	j.pad[0] = '\n'
	for i := 1; i < len(j.pad); i++ {
		j.pad[i] = ' '
	}
	return j, nil
}

// offset is the number of bytes written so far.
func (j *jsonOut) offset() int64 { return j.flushed + int64(len(j.b)) }

// flush hands the pending output to the file.
func (j *jsonOut) flush() {
	if len(j.b) == 0 {
		return
	}
	if j.f != nil && j.err == nil {
		_, j.err = j.f.Write(j.b)
	}
	j.flushed += int64(len(j.b))
	j.b = j.b[:0]
}

func (j *jsonOut) close() error {
	j.flush()
	b := j.b[:0]
	j.o.pool.Put(&b)
	j.b = nil
	err := j.err
	if j.f != nil {
		if cerr := j.f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// nl starts a new line indented for depth d, flushing first when the
// buffer is full (nearly every line passes here, so the buffer stays
// bounded).
func (j *jsonOut) nl(d int) {
	if len(j.b) >= j.o.flushAt {
		j.flush()
	}
	j.indent(d)
}

// indent starts a new line indented for depth d without flushing: the
// text of a tensor stays in one piece in the buffer, for the cache.
func (j *jsonOut) indent(d int) {
	n := 1 + d*j.ind
	if n > len(j.pad) {
		p := make([]byte, n)
		p[0] = '\n'
		for i := 1; i < n; i++ {
			p[i] = ' '
		}
		j.pad = p
	}
	j.b = append(j.b, j.pad[:n]...)
}

func (j *jsonOut) raw(s string) { j.b = append(j.b, s...) }

func (j *jsonOut) str(s string) { j.b = appendQuoted(j.b, s) }

func (j *jsonOut) strBytes(s []byte) { j.b = appendQuoted(j.b, s) }

// appendQuoted appends s as a JSON string.
func appendQuoted[S string | []byte](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x7f {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// key writes `"k": `.
func (j *jsonOut) key(k string) {
	j.str(k)
	j.b = append(j.b, ": "...)
}

func (j *jsonOut) num(x float64) {
	switch {
	case math.IsNaN(x):
		if j.strNF {
			j.raw(`"nan"`)
		} else {
			j.raw("NaN")
		}
	case math.IsInf(x, 1):
		if j.strNF {
			j.raw(`"inf"`)
		} else {
			j.raw("Infinity")
		}
	case math.IsInf(x, -1):
		if j.strNF {
			j.raw(`"-inf"`)
		} else {
			j.raw("-Infinity")
		}
	default:
		j.b = appendPyFloat(j.b, x)
	}
}

func (j *jsonOut) int(x int64) { j.b = strconv.AppendInt(j.b, x, 10) }

// typedHead writes `{"type": typ, "value": ` at depth d; typedTail closes it.
func (j *jsonOut) typedHead(d int, typ string) {
	j.raw("{")
	j.nl(d + 1)
	j.raw(`"type": `)
	j.str(typ)
	j.raw(",")
	j.nl(d + 1)
	j.raw(`"value": `)
}

func (j *jsonOut) typedTail(d int) {
	j.nl(d)
	j.raw("}")
}

// value writes an argument whose first character goes at the current
// position; nested members are indented at depth d+1.
func (j *jsonOut) value(d int, a arg) {
	switch v := a.(type) {
	case nil:
		j.raw("null")
	case TensorValue:
		t := v.Written()
		if t == nil {
			j.raw("null")
			return
		}
		j.tensor(d, t)
	case Int:
		j.typedHead(d, "int")
		j.int(int64(v))
		j.typedTail(d)
	case Float:
		j.typedHead(d, "float")
		j.num(float64(v))
		j.typedTail(d)
	case Bool:
		j.typedHead(d, "bool")
		j.bool(bool(v))
		j.typedTail(d)
	case Str:
		j.typedHead(d, "str")
		j.str(string(v))
		j.typedTail(d)
	case DTypeName:
		j.typedHead(d, "torch.dtype")
		j.str(string(v))
		j.typedTail(d)
	case ReduceOp:
		j.typedHead(d, "torch.distributed.ReduceOp")
		j.str(string(v))
		j.typedTail(d)
	case Size:
		j.typedHead(d, "torch.Size")
		j.intList(d+1, v)
		j.typedTail(d)
	case Group:
		j.group(d, v)
	case IntList:
		if len(v) == 0 {
			j.raw("[]")
			return
		}
		j.raw("[")
		for i, x := range v {
			if i > 0 {
				j.raw(",")
			}
			j.nl(d + 1)
			j.typedHead(d+1, "int")
			j.int(int64(x))
			j.typedTail(d + 1)
		}
		j.nl(d)
		j.raw("]")
	case List:
		j.list(d, v)
	default:
		panic("msprobewrite: unknown argument type")
	}
}

func (j *jsonOut) bool(b bool) {
	if b {
		j.raw("true")
	} else {
		j.raw("false")
	}
}

// intList writes a list of ints; it does not flush (see indent).
func (j *jsonOut) intList(d int, v []int) {
	if len(v) == 0 {
		j.raw("[]")
		return
	}
	j.raw("[")
	for i, x := range v {
		if i > 0 {
			j.raw(",")
		}
		j.indent(d + 1)
		j.int(int64(x))
	}
	j.indent(d)
	j.raw("]")
}

func (j *jsonOut) group(d int, g Group) {
	if j.grp != "recorded" {
		j.raw("null")
		return
	}
	j.raw("{")
	j.nl(d + 1)
	j.raw(`"type": "torch.ProcessGroup",`)
	j.nl(d + 1)
	j.raw(`"group_ranks": `)
	j.intList(d+1, g.Ranks)
	j.raw(",")
	j.nl(d + 1)
	j.raw(`"group_id": `)
	j.str(g.ID)
	j.nl(d)
	j.raw("}")
}

// stat writes one `"Key": value,` line of a tensor at depth d; finite
// values are numeric strings when the format says so.
func (j *jsonOut) stat(d int, key string, x float64) {
	j.indent(d)
	j.raw(key)
	if j.statStr && !math.IsNaN(x) && !math.IsInf(x, 0) {
		j.b = append(j.b, '"')
		j.b = appendPyFloat(j.b, x)
		j.b = append(j.b, '"')
	} else {
		j.num(x)
	}
	j.b = append(j.b, ',')
}

// statInt writes an integer statistic line (a string when the format says
// so).
func (j *jsonOut) statInt(d int, key string, x int64) {
	j.indent(d)
	j.raw(key)
	if j.statStr {
		j.b = append(j.b, '"')
		j.int(x)
		j.b = append(j.b, '"')
	} else {
		j.int(x)
	}
	j.b = append(j.b, ',')
}

// statKeys are the spellings of the four statistics keys, with the
// separator, for a format.
func statKeys(f *spec.Format) [4]string {
	names := [4]string{"Max", "Min", "Mean", "Norm"}
	for i, n := range names {
		switch f.StatKeys {
		case "lower":
			n = strings.ToLower(n)
		case "upper":
			n = strings.ToUpper(n)
		}
		names[i] = `"` + n + `": `
	}
	return names
}

func (j *jsonOut) tensor(d int, t *Tensor) { j.cachedTensor(d, t) }

// tensorText renders a tensor; it does not flush (see indent).
func (j *jsonOut) tensorText(d int, t *Tensor) {
	j.raw("{")
	j.indent(d + 1)
	j.raw(`"type": "torch.Tensor",`)
	j.indent(d + 1)
	j.raw(`"dtype": "`)
	j.raw(t.DT.String())
	j.raw(`",`)
	j.indent(d + 1)
	j.raw(`"shape": `)
	j.intList(d+1, t.Shape)
	j.raw(",")
	k := &j.keys
	switch {
	case t.Empty:
		for _, key := range k {
			j.indent(d + 1)
			j.raw(key)
			j.raw("null,")
		}
	case t.DT == DTBool:
		j.indent(d + 1)
		j.raw(k[0])
		j.bool(t.Max != 0)
		j.raw(",")
		j.indent(d + 1)
		j.raw(k[1])
		j.bool(t.Min != 0)
		j.raw(",")
		j.indent(d + 1)
		j.raw(k[2])
		j.raw("null,")
		j.indent(d + 1)
		j.raw(k[3])
		j.raw("null,")
	case t.DT == DTInt64:
		j.statInt(d+1, k[0], int64(t.Max))
		j.statInt(d+1, k[1], int64(t.Min))
		if len(t.Shape) == 0 {
			j.statInt(d+1, k[2], int64(t.Max))
			j.statInt(d+1, k[3], int64(math.Abs(t.Max)))
		} else {
			j.indent(d + 1)
			j.raw(k[2])
			j.raw("null,")
			j.indent(d + 1)
			j.raw(k[3])
			j.raw("null,")
		}
	default:
		mx, mn, mean, norm := t.Stats()
		j.stat(d+1, k[0], mx)
		j.stat(d+1, k[1], mn)
		j.stat(d+1, k[2], mean)
		j.stat(d+1, k[3], norm)
	}
	j.indent(d + 1)
	j.raw(`"requires_grad": `)
	j.bool(t.RG)
	j.indent(d)
	j.raw("}")
}

// list writes a JSON array of args at depth d.
func (j *jsonOut) list(d int, l []arg) {
	if len(l) == 0 {
		j.raw("[]")
		return
	}
	j.raw("[")
	for i, x := range l {
		if i > 0 {
			j.raw(",")
		}
		j.nl(d + 1)
		j.value(d+1, x)
	}
	j.nl(d)
	j.raw("]")
}

// writeTensors writes a JSON array of tensors (nil is null) at depth d.
func writeTensors[T TensorValue](j *jsonOut, d int, ts []T) {
	if len(ts) == 0 {
		j.raw("[]")
		return
	}
	j.raw("[")
	for i, t := range ts {
		if i > 0 {
			j.raw(",")
		}
		j.nl(d + 1)
		if w := t.Written(); w == nil {
			j.raw("null")
		} else {
			j.tensor(d+1, w)
		}
	}
	j.nl(d)
	j.raw("]")
}

// object writes {"k": v, ...} at depth d.
func (j *jsonOut) object(d int, kvs []KV) {
	if len(kvs) == 0 {
		j.raw("{}")
		return
	}
	j.raw("{")
	for i, p := range kvs {
		if i > 0 {
			j.raw(",")
		}
		j.nl(d + 1)
		j.key(p.Key)
		j.value(d+1, p.Value)
	}
	j.nl(d)
	j.raw("}")
}

// GroupID is msprobe's group id: the CRC-32 of str(group_ranks).
func GroupID(ranks []int) string {
	b := []byte{'['}
	for i, r := range ranks {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(r), 10)
	}
	b = append(b, ']')
	return strconv.FormatUint(uint64(crc32.ChecksumIEEE(b))|1<<32, 16)[1:]
}

// DumpFile streams a dump.json.
type DumpFile struct {
	j       *jsonOut
	entries int
}

// NewDumpFile creates the dump.json at path (an empty path only counts the
// bytes) and writes its header for the dump level.
func NewDumpFile(path string, level string, f *spec.Format, o *OutSizes) (*DumpFile, error) {
	j, err := newJSONOut(path, f, o)
	if err != nil {
		return nil, err
	}
	j.raw("{")
	j.nl(1)
	j.raw(`"task": "statistics",`)
	j.nl(1)
	j.raw(`"level": `)
	j.str(level)
	j.raw(",")
	if f.Framework != "none" {
		j.nl(1)
		j.raw(`"framework": "pytorch",`)
	}
	j.nl(1)
	j.raw(`"dump_data_dir": null,`)
	j.nl(1)
	j.raw(`"data": {`)
	return &DumpFile{j: j}, nil
}

// begin starts the entry called name and returns the depth of its members.
func (df *DumpFile) begin(name string) {
	j := df.j
	if df.entries > 0 {
		j.raw(",")
	}
	df.entries++
	j.nl(2)
	j.key(name)
	j.raw("{")
}

func (df *DumpFile) end() {
	df.j.nl(2)
	df.j.raw("}")
}

// field writes one member of an entry (depth 3).
func (df *DumpFile) field(first bool, k string, write func(d int)) {
	j := df.j
	if !first {
		j.raw(",")
	}
	j.nl(3)
	j.key(k)
	write(3)
}

// Forward writes a forward entry: a call's arguments, keyword arguments
// and outputs, and for a module call (params not nil) its parameters.
func (df *DumpFile) Forward(name string, in []arg, kw []KV, out []arg, params []KV) {
	j := df.j
	df.begin(name)
	df.field(true, "input_args", func(d int) { j.list(d, in) })
	df.field(false, "input_kwargs", func(d int) { j.object(d, kw) })
	df.field(false, "output", func(d int) { j.list(d, out) })
	if params != nil {
		df.field(false, "parameters", func(d int) { j.object(d, params) })
	}
	df.end()
}

// Backward writes a backward entry: the gradients in and out of a node.
func Backward[T TensorValue](df *DumpFile, name string, in, out []T) {
	j := df.j
	df.begin(name)
	df.field(true, "input", func(d int) { writeTensors(j, d, in) })
	df.field(false, "output", func(d int) { writeTensors(j, d, out) })
	df.end()
}

// ParamsGrad writes a Module.*.parameters_grad entry.
func (df *DumpFile) ParamsGrad(name string, grads []KV) {
	j := df.j
	df.begin(name)
	for i, p := range grads {
		df.field(i == 0, p.Key, func(d int) {
			j.raw("[")
			j.nl(d + 1)
			j.value(d+1, p.Value)
			j.nl(d)
			j.raw("]")
		})
	}
	df.end()
}

// Entries is the number of entries written.
func (df *DumpFile) Entries() int { return df.entries }

// Offset is the number of bytes written so far; after Close, the size of
// the file.
func (df *DumpFile) Offset() int64 { return df.j.offset() }

// Close ends the document and closes the file.
func (df *DumpFile) Close() error {
	j := df.j
	if df.entries > 0 {
		j.nl(1)
	}
	j.raw("}")
	j.nl(0)
	j.raw("}")
	return j.close()
}
