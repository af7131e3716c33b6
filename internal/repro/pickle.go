package repro

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A pickle is read opcode by opcode, never run: what it could call is named
// by its GLOBAL, INST and STACK_GLOBAL opcodes, and each such name must be
// one that torch.load(weights_only=True) accepts in some torch version.

// maxPickle bounds the bytes of one pickle read; a tensor's data.pkl is a
// few hundred bytes.
const maxPickle = 16 << 20

// maxMemo bounds the memo indices a pickle may put.
const maxMemo = 4096

// errPickle marks a pickle that refers to something a tensor file never holds.
var errPickle = errors.New("loading it could run code from the file")

// pickleScanner reads one pickle and checks the globals it names.
type pickleScanner struct {
	r       *bufio.Reader
	off     int64
	memo    map[uint64]string   // memoized strings, by memo index
	defined map[uint64]struct{} // every index put: MEMOIZE puts at their count
	// top and below are the two values last pushed when they are strings
	// (ok says so): STACK_GLOBAL takes its module and name from them.
	top, below pickleStr
}

type pickleStr struct {
	s  string
	ok bool
}

// scanPickle reads one pickle from r up to its STOP opcode without running
// it, and refuses it when it names a callable that torch's weights-only
// loader does not accept (os.system, builtins.eval, ...).
func scanPickle(r *bufio.Reader) error {
	p := &pickleScanner{r: r, memo: map[uint64]string{}, defined: map[uint64]struct{}{}}
	for {
		if p.off > maxPickle {
			return fmt.Errorf("a pickle larger than %d MiB: not a tensor's", maxPickle>>20)
		}
		op, err := p.readByte()
		if err != nil {
			return p.ended(err)
		}
		stop, err := p.step(op)
		if err != nil || stop {
			return err
		}
	}
}

// step reads the argument of one opcode and checks it; stop is true at STOP.
func (p *pickleScanner) step(op byte) (stop bool, err error) {
	if n, ok := pickleFixed[op]; ok {
		p.push(pickleStr{})
		return false, p.skip(int64(n))
	}
	switch op {
	case '.': // STOP
		return true, nil
	case 'c', 'i': // GLOBAL, INST
		return false, p.global()
	case 0x93: // STACK_GLOBAL
		if !p.top.ok || !p.below.ok {
			return false, fmt.Errorf("offset %d: a global whose name is computed: %w", p.off-1, errPickle)
		}
		return false, p.check(p.below.s, p.top.s)
	case 0x82, 0x83, 0x84: // EXT1, EXT2, EXT4
		return false, fmt.Errorf("offset %d: a global named by an extension code: %w", p.off-1, errPickle)
	case 0x80: // PROTO
		return false, p.skip(1)
	case 0x95: // FRAME
		return false, p.skip(8)
	case 'p', 'q', 'r', 0x94: // PUT, BINPUT, LONG_BINPUT, MEMOIZE
		return false, p.put(op)
	case 'g', 'h', 'j': // GET, BINGET, LONG_BINGET
		return false, p.get(op)
	case 'F', 'I', 'L', 'P', 'S', 'V': // FLOAT, INT, LONG, PERSID, STRING, UNICODE: a line
		line, err := p.line()
		if err == nil && (op == 'S' || op == 'V') {
			p.push(pickleStr{s: strings.Trim(line, `'"`), ok: true})
		} else {
			p.push(pickleStr{})
		}
		return false, err
	}
	if w, ok := pickleCounted[op]; ok {
		return false, p.counted(op, w)
	}
	return false, fmt.Errorf("offset %d: opcode 0x%02x is not a pickle opcode: not a pickle", p.off-1, op)
}

// pickleFixed are the opcodes with an argument of a fixed size (often none).
var pickleFixed = map[byte]int{
	'(': 0, '0': 0, '1': 0, '2': 0, 'N': 0, 'Q': 0, 'R': 0, 'a': 0, 'b': 0,
	'd': 0, '}': 0, 'e': 0, 'l': 0, ']': 0, 'o': 0, 's': 0, 't': 0, ')': 0,
	'u': 0, 0x81: 0, 0x85: 0, 0x86: 0, 0x87: 0, 0x88: 0, 0x89: 0, 0x8f: 0,
	0x90: 0, 0x91: 0, 0x92: 0, 0x97: 0, 0x98: 0,
	'J': 4, 'K': 1, 'M': 2, 'G': 8,
}

// pickleCounted are the opcodes followed by a byte count of this width and
// that many bytes.
var pickleCounted = map[byte]int{
	'T': 4, 'U': 1, 'X': 4, 0x8a: 1, 0x8b: 4, 'B': 4, 'C': 1, 0x8c: 1, 0x8d: 8, 0x8e: 8, 0x96: 8,
}

// global reads the module and name lines of GLOBAL or INST and checks them.
func (p *pickleScanner) global() error {
	module, err := p.line()
	if err != nil {
		return err
	}
	name, err := p.line()
	if err != nil {
		return err
	}
	return p.check(module, name)
}

// check refuses a global that is not part of a saved tensor.
func (p *pickleScanner) check(module, name string) error {
	p.push(pickleStr{})
	if allowedGlobal(module, name) {
		return nil
	}
	return fmt.Errorf("it names %s.%s, which no tensor file holds: %w", printable(module), printable(name), errPickle)
}

// counted reads an opcode's byte count and skips the bytes, keeping a short
// string (a module or a name for STACK_GLOBAL).
func (p *pickleScanner) counted(op byte, width int) error {
	n, err := p.uint(width)
	if err != nil {
		return err
	}
	text := op == 'X' || op == 0x8c || op == 0x8d || op == 'T' || op == 'U'
	if !text || n > 512 {
		p.push(pickleStr{})
		return p.skip(int64(min(n, maxPickle+1)))
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(p.r, b); err != nil {
		return p.ended(err)
	}
	p.off += int64(n)
	p.push(pickleStr{s: string(b), ok: true})
	return nil
}

// put memoizes the value on top of the stack. The memo holds the strings
// only where the scanner knows the value put: a PUT of anything else (of
// a value it cannot follow) forgets what the index held before, so that a
// later GET of it can name no global. MEMOIZE puts at the memo's size, as
// Python does, counting every index put; a pickle putting more than
// maxMemo indices is refused (a tensor's puts a few dozen).
func (p *pickleScanner) put(op byte) error {
	idx, err := uint64(len(p.defined)), error(nil)
	if op != 0x94 { // PUT, BINPUT, LONG_BINPUT: the index given
		if idx, err = p.memoIndex(op); err != nil {
			return err
		}
	}
	p.defined[idx] = struct{}{}
	if len(p.defined) > maxMemo {
		return fmt.Errorf("offset %d: more than %d memo entries: not a tensor's", p.off, maxMemo)
	}
	if p.top.ok {
		p.memo[idx] = p.top.s
	} else {
		delete(p.memo, idx)
	}
	return nil
}

// get pushes a memoized value.
func (p *pickleScanner) get(op byte) error {
	idx, err := p.memoIndex(op)
	s, ok := p.memo[idx]
	p.push(pickleStr{s: s, ok: ok})
	return err
}

// memoIndex reads the memo index of a PUT or GET opcode: one byte (BINPUT,
// BINGET), four (LONG_BINPUT, LONG_BINGET) or a line of digits.
func (p *pickleScanner) memoIndex(op byte) (uint64, error) {
	switch op {
	case 'q', 'h':
		return p.uint(1)
	case 'r', 'j':
		return p.uint(4)
	}
	return p.lineUint()
}

func (p *pickleScanner) push(v pickleStr) { p.below, p.top = p.top, v }

func (p *pickleScanner) readByte() (byte, error) {
	b, err := p.r.ReadByte()
	if err == nil {
		p.off++
	}
	return b, err
}

// uint reads a little-endian unsigned number of width bytes.
func (p *pickleScanner) uint(width int) (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(p.r, b[:width]); err != nil {
		return 0, p.ended(err)
	}
	p.off += int64(width)
	return binary.LittleEndian.Uint64(b[:]), nil
}

// line reads an opcode's text argument, up to its newline.
func (p *pickleScanner) line() (string, error) {
	b, err := p.r.ReadSlice('\n')
	p.off += int64(len(b))
	if errors.Is(err, bufio.ErrBufferFull) {
		return "", fmt.Errorf("offset %d: a text argument longer than %d bytes: not a tensor's pickle", p.off, p.r.Size())
	}
	if err != nil {
		return "", p.ended(err)
	}
	return strings.TrimSuffix(string(b[:len(b)-1]), "\r"), nil
}

func (p *pickleScanner) lineUint() (uint64, error) {
	s, err := p.line()
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("offset %d: memo index %q is not a number: not a pickle", p.off, printable(s))
		}
		n = n*10 + uint64(c-'0')
	}
	return n, nil
}

func (p *pickleScanner) skip(n int64) error {
	if n > maxPickle {
		return fmt.Errorf("offset %d: a value of %d bytes: not a tensor's pickle", p.off, n)
	}
	d, err := p.r.Discard(int(n))
	p.off += int64(d)
	if err != nil {
		return p.ended(err)
	}
	return nil
}

// ended says a pickle stopped before its STOP opcode.
func (p *pickleScanner) ended(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("offset %d: the pickle ends before its STOP opcode: %w", p.off, io.ErrUnexpectedEOF)
	}
	return err
}

// printable clips a name from a file for a message and makes it safe to print.
func printable(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

// allowedGlobal reports whether module.name is one that
// torch.load(weights_only=True) accepts in a torch version (1.13 on): the
// functions that rebuild tensors and parameters, the storage classes, the
// dtypes, layouts, memory formats and quantization schemes, torch.Size,
// torch.device and collections.OrderedDict.
func allowedGlobal(module, name string) bool {
	switch module {
	case "collections":
		return name == "OrderedDict"
	case "torch._utils":
		return strings.HasPrefix(name, "_rebuild_") && name != "_rebuild_device_tensor_from_numpy" && name != "_rebuild_xla_tensor" && name != "_rebuild_mps_tensor"
	case "torch._tensor":
		return name == "_rebuild_from_type_v2"
	case "torch.nn.parameter":
		return name == "Parameter"
	case "torch.serialization":
		return name == "_get_layout"
	case "torch.storage":
		return name == "UntypedStorage" || name == "TypedStorage"
	case "torch":
		return torchGlobals[name] || storageClass(name)
	}
	return false
}

// storageClass reports whether name is a torch storage class: FloatStorage,
// BFloat16Storage, UntypedStorage, ...
func storageClass(name string) bool {
	base, ok := strings.CutSuffix(name, "Storage")
	if !ok || base == "" || base[0] < 'A' || base[0] > 'Z' {
		return false
	}
	for _, c := range base {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// torchGlobals are the names in module torch, other than storage classes,
// that a saved tensor refers to.
var torchGlobals = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`Size Tensor device
		float32 float float64 double float16 half bfloat16 complex32 chalf complex64 cfloat complex128 cdouble
		uint8 uint16 uint32 uint64 int8 int16 short int32 int int64 long bool
		qint8 quint8 qint32 quint4x2 quint2x4
		float8_e4m3fn float8_e5m2 float8_e4m3fnuz float8_e5m2fnuz float8_e8m0fnu
		strided sparse_coo sparse_csr sparse_csc sparse_bsr sparse_bsc _mkldnn jagged
		contiguous_format channels_last channels_last_3d preserve_format
		per_tensor_affine per_channel_affine per_tensor_symmetric per_channel_symmetric per_channel_affine_float_qparams`) {
		m[n] = true
	}
	return m
}()
