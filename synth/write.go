package synth

import (
	"bufio"
	"hash/crc32"
	"io"
	"math"
	"os"
	"strconv"
	"sync"
)

// Values of dump entries. A nil arg is JSON null.
type (
	arg      = any
	aInt     int64
	aFloat   float64
	aStr     string
	aBool    bool
	aDType   string // kwarg dtype: {"type": "torch.dtype", "value": ...}
	aRedOp   string // {"type": "torch.distributed.ReduceOp", "value": ...}
	aSize    []int  // {"type": "torch.Size", "value": [...]}
	aList    []arg
	aIntList []int // a Python list of ints: [{"type": "int", ...}, ...]
)

// aGroup is a ProcessGroup argument.
type aGroup struct{ g *group }

// kv is a keyword argument or a named parameter.
type kv struct {
	k string
	v arg
}

// countWriter counts the bytes that reached the file.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// jsonOut writes JSON the way Python's json.dump(obj, f, indent=N) does.
type jsonOut struct {
	f     *os.File
	cw    countWriter
	w     *bufio.Writer
	ind   int
	pad   []byte
	strNF bool
	grp   string
	buf   []byte
}

func newJSONOut(path string, f *Format) (*jsonOut, error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	j := &jsonOut{f: fh, ind: f.Indent, strNF: f.NonFinite == "string", grp: f.Groups}
	j.cw.w = fh
	j.w = writerPool.Get().(*bufio.Writer)
	j.w.Reset(&j.cw)
	j.pad = make([]byte, 1+24*j.ind)
	j.pad[0] = '\n'
	for i := 1; i < len(j.pad); i++ {
		j.pad[i] = ' '
	}
	return j, nil
}

// offset is the number of bytes written so far.
func (j *jsonOut) offset() int64 { return j.cw.n + int64(j.w.Buffered()) }

func (j *jsonOut) close() error {
	err := j.w.Flush()
	j.w.Reset(nil)
	writerPool.Put(j.w)
	j.w = nil
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writerPool recycles the file buffers.
var writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}

func (j *jsonOut) nl(d int) {
	n := 1 + d*j.ind
	if n > len(j.pad) {
		p := make([]byte, n)
		p[0] = '\n'
		for i := 1; i < n; i++ {
			p[i] = ' '
		}
		j.pad = p
	}
	j.w.Write(j.pad[:n])
}

func (j *jsonOut) raw(s string) { j.w.WriteString(s) }

func (j *jsonOut) str(s string) {
	j.w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x7f {
			continue
		}
		j.w.WriteString(s[start:i])
		switch c {
		case '"':
			j.w.WriteString(`\"`)
		case '\\':
			j.w.WriteString(`\\`)
		case '\n':
			j.w.WriteString(`\n`)
		case '\t':
			j.w.WriteString(`\t`)
		default:
			j.buf = append(j.buf[:0], `\u00`...)
			j.buf = append(j.buf, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
			j.w.Write(j.buf)
		}
		start = i + 1
	}
	j.w.WriteString(s[start:])
	j.w.WriteByte('"')
}

// key writes `"k": `.
func (j *jsonOut) key(k string) {
	j.str(k)
	j.w.WriteString(": ")
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
		j.buf = appendPyFloat(j.buf[:0], x)
		j.w.Write(j.buf)
	}
}

func (j *jsonOut) int(x int64) {
	j.buf = strconv.AppendInt(j.buf[:0], x, 10)
	j.w.Write(j.buf)
}

// typed writes {"type": typ, "value": <v>} at depth d.
func (j *jsonOut) typed(d int, typ string, v func()) {
	j.raw("{")
	j.nl(d + 1)
	j.raw(`"type": `)
	j.str(typ)
	j.raw(",")
	j.nl(d + 1)
	j.raw(`"value": `)
	v()
	j.nl(d)
	j.raw("}")
}

// value writes an argument whose first character goes at the current
// position; nested members are indented at depth d+1.
func (j *jsonOut) value(d int, a arg) {
	switch v := a.(type) {
	case nil:
		j.raw("null")
	case *tensor:
		if v == nil {
			j.raw("null")
			return
		}
		j.tensor(d, v)
	case aInt:
		j.typed(d, "int", func() { j.int(int64(v)) })
	case aFloat:
		j.typed(d, "float", func() { j.num(float64(v)) })
	case aBool:
		j.typed(d, "bool", func() { j.bool(bool(v)) })
	case aStr:
		j.typed(d, "str", func() { j.str(string(v)) })
	case aDType:
		j.typed(d, "torch.dtype", func() { j.str(string(v)) })
	case aRedOp:
		j.typed(d, "torch.distributed.ReduceOp", func() { j.str(string(v)) })
	case aSize:
		j.typed(d, "torch.Size", func() { j.intList(d+1, v) })
	case aGroup:
		j.group(d, v.g)
	case aIntList:
		l := make(aList, len(v))
		for i, x := range v {
			l[i] = aInt(x)
		}
		j.value(d, l)
	case aList:
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
			j.value(d+1, x)
		}
		j.nl(d)
		j.raw("]")
	default:
		panic("synth: unknown argument type")
	}
}

func (j *jsonOut) bool(b bool) {
	if b {
		j.raw("true")
	} else {
		j.raw("false")
	}
}

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
		j.nl(d + 1)
		j.int(int64(x))
	}
	j.nl(d)
	j.raw("]")
}

func (j *jsonOut) group(d int, g *group) {
	if j.grp != "recorded" || g == nil {
		j.raw("null")
		return
	}
	j.raw("{")
	j.nl(d + 1)
	j.raw(`"type": "torch.ProcessGroup",`)
	j.nl(d + 1)
	j.raw(`"group_ranks": `)
	j.intList(d+1, g.ranks)
	j.raw(",")
	j.nl(d + 1)
	j.raw(`"group_id": `)
	j.str(g.id)
	j.nl(d)
	j.raw("}")
}

func (j *jsonOut) tensor(d int, t *tensor) {
	j.raw("{")
	j.nl(d + 1)
	j.raw(`"type": "torch.Tensor",`)
	j.nl(d + 1)
	j.raw(`"dtype": "`)
	j.raw(t.DT.String())
	j.raw(`",`)
	j.nl(d + 1)
	j.raw(`"shape": `)
	j.intList(d+1, t.Shape)
	j.raw(",")
	switch {
	case t.Empty:
		for _, k := range [...]string{`"Max": null,`, `"Min": null,`, `"Mean": null,`, `"Norm": null,`} {
			j.nl(d + 1)
			j.raw(k)
		}
	case t.DT == dtBool:
		j.nl(d + 1)
		j.raw(`"Max": `)
		j.bool(t.Max != 0)
		j.raw(",")
		j.nl(d + 1)
		j.raw(`"Min": `)
		j.bool(t.Min != 0)
		j.raw(",")
		j.nl(d + 1)
		j.raw(`"Mean": null,`)
		j.nl(d + 1)
		j.raw(`"Norm": null,`)
	case t.DT == dtI64:
		j.nl(d + 1)
		j.raw(`"Max": `)
		j.int(int64(t.Max))
		j.raw(",")
		j.nl(d + 1)
		j.raw(`"Min": `)
		j.int(int64(t.Min))
		j.raw(",")
		if len(t.Shape) == 0 {
			j.nl(d + 1)
			j.raw(`"Mean": `)
			j.int(int64(t.Max))
			j.raw(",")
			j.nl(d + 1)
			j.raw(`"Norm": `)
			j.int(int64(math.Abs(t.Max)))
			j.raw(",")
		} else {
			j.nl(d + 1)
			j.raw(`"Mean": null,`)
			j.nl(d + 1)
			j.raw(`"Norm": null,`)
		}
	default:
		mx, mn, mean, norm := t.stats()
		j.nl(d + 1)
		j.raw(`"Max": `)
		j.num(mx)
		j.raw(",")
		j.nl(d + 1)
		j.raw(`"Min": `)
		j.num(mn)
		j.raw(",")
		j.nl(d + 1)
		j.raw(`"Mean": `)
		j.num(mean)
		j.raw(",")
		j.nl(d + 1)
		j.raw(`"Norm": `)
		j.num(norm)
		j.raw(",")
	}
	j.nl(d + 1)
	j.raw(`"requires_grad": `)
	j.bool(t.RG)
	j.nl(d)
	j.raw("}")
}

// list writes a JSON array of args at depth d.
func (j *jsonOut) list(d int, l []arg) { j.value(d, aList(l)) }

// object writes {"k": v, ...} at depth d.
func (j *jsonOut) object(d int, kvs []kv) {
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
		j.key(p.k)
		j.value(d+1, p.v)
	}
	j.nl(d)
	j.raw("}")
}

// groupID is msprobe's group id: the CRC-32 of str(group_ranks).
func groupID(ranks []int) string {
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

// dumpFile streams a dump.json.
type dumpFile struct {
	j       *jsonOut
	entries int
}

func newDumpFile(path string, level string, f *Format) (*dumpFile, error) {
	j, err := newJSONOut(path, f)
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
	return &dumpFile{j: j}, nil
}

// begin starts the entry called name and returns the depth of its members.
func (df *dumpFile) begin(name string) {
	j := df.j
	if df.entries > 0 {
		j.raw(",")
	}
	df.entries++
	j.nl(2)
	j.key(name)
	j.raw("{")
}

func (df *dumpFile) end() {
	df.j.nl(2)
	df.j.raw("}")
}

// field writes one member of an entry (depth 3).
func (df *dumpFile) field(first bool, k string, write func(d int)) {
	j := df.j
	if !first {
		j.raw(",")
	}
	j.nl(3)
	j.key(k)
	write(3)
}

func (df *dumpFile) forward(name string, in []arg, kw []kv, out []arg, params []kv) {
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

func (df *dumpFile) backward(name string, in, out []*tensor) {
	j := df.j
	df.begin(name)
	df.field(true, "input", func(d int) { j.list(d, tensorArgs(in)) })
	df.field(false, "output", func(d int) { j.list(d, tensorArgs(out)) })
	df.end()
}

func (df *dumpFile) paramsGrad(name string, grads []kv) {
	j := df.j
	df.begin(name)
	for i, p := range grads {
		df.field(i == 0, p.k, func(d int) { j.list(d, []arg{p.v}) })
	}
	df.end()
}

func (df *dumpFile) close() error {
	j := df.j
	if df.entries > 0 {
		j.nl(1)
	}
	j.raw("}")
	j.nl(0)
	j.raw("}")
	return j.close()
}

func tensorArgs(ts []*tensor) []arg {
	a := make([]arg, len(ts))
	for i, t := range ts {
		if t != nil {
			a[i] = t
		}
	}
	return a
}
