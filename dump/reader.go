package dump

import (
	"errors"
	"fmt"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// ReaderOptions tunes a Reader.
type ReaderOptions struct {
	// Details asks for everything a report shows: slots, types, dtypes,
	// shapes, data_name and the values of all statistics. Without it the
	// reader keeps only what decides NaN/Inf questions, which is faster.
	Details bool
	// WindowSize is the read window in bytes (0: 1 MiB).
	WindowSize int
	// Select, when set, is asked before each entry's value is read; when
	// it says no, the value is skipped without being parsed (only strings
	// and brackets are followed, so a syntax error inside it goes unseen),
	// and the Entry has only its name, index and byte range (Skipped is set).
	Select func(name string, offset int64) bool
	// Indent, when set, says the document is json.dump(indent=Indent)
	// output, as the byte search saw it (Hits.Indent, when Located): an
	// entry Select skips is then passed over to its closing line ("\n",
	// two indentations, "}") without its bytes being looked at, which is
	// several times faster than following its strings and brackets.
	Indent int
}

// maxDepth bounds nesting: msprobe writes at most about ten levels, and a
// hostile file must not make memory grow.
const maxDepth = 512

// maxString bounds what the reader keeps of one string: msprobe's strings
// are names, types and short values; a longer string value is cut
// (Entry.CutStrings), a longer name is damage.
const maxString = 1 << 20

// FormatError is damage in dump.json: a syntax error or a file that ends
// early. Entries before it were returned; nothing after it was read.
type FormatError struct {
	Offset int64  // byte offset of the damage
	Entry  string // the entry being read when it was found; "" outside "data"
	Err    error
}

func (e *FormatError) Error() string {
	where := fmt.Sprintf("offset %d", e.Offset)
	if e.Entry != "" {
		where += fmt.Sprintf(" in entry %q", e.Entry)
	}
	msg := e.Err.Error()
	var se *jsonlex.SyntaxError
	if errors.As(e.Err, &se) {
		msg = se.Msg
	}
	if e.Truncated() {
		return where + ": file ends early (" + msg + "); a crash during msprobe's write leaves this"
	}
	return where + ": " + msg
}

func (e *FormatError) Unwrap() error { return e.Err }

// Truncated reports whether the file simply stops, rather than holding
// something that is not JSON.
func (e *FormatError) Truncated() bool { return errors.Is(e.Err, io.ErrUnexpectedEOF) }

// Reader streams the entries of one dump.json in file order. Like
// bufio.Scanner, it owns the Entry it returns until the next call to Next.
type Reader struct {
	lx    *jsonlex.Lexer
	opt   ReaderOptions
	hdr   Header
	e     Entry
	state int // 0 before "data", 1 inside it, 2 done
	index int
	err   error

	paramGrads    bool     // the current entry is a parameters_grad entry
	path          []string // slot path below the field (details only)
	shape         []int
	groupRanks    []int
	merged        map[mergeKey]int // summaries of values past MaxKept
	closeLine     []byte           // the line that closes an entry, when ReaderOptions.Indent is set
	direct        int              // objects read straight from the window
	directEntries int              // entries read so
	tensorClose   closeLine        // how the last tensor read directly closed
	shapeClose    closeLine        // how the last shape read directly closed
}

// NewReader starts reading a dump.json from r.
func NewReader(r io.Reader, opt ReaderOptions) *Reader {
	rd := &Reader{
		lx: jsonlex.New(r, jsonlex.Options{WindowSize: opt.WindowSize, MaxDepth: maxDepth, MaxStringLen: maxString, CutLongStrings: true}),
	}
	rd.setOptions(opt)
	return rd
}

func (r *Reader) setOptions(opt ReaderOptions) {
	r.opt = opt
	r.closeLine = r.closeLine[:0]
	if opt.Indent > 0 && opt.Indent <= 64 {
		r.closeLine = entryLevelLine(r.closeLine, opt.Indent, '}')
	}
}

// Reuse makes the Reader read a new dump.json from src with new options,
// keeping its buffers (the window keeps the size it was made with).
func (r *Reader) Reuse(src io.Reader, opt ReaderOptions) {
	r.setOptions(opt)
	r.paramGrads, r.path = false, r.path[:0]
	clear(r.merged)
	r.Reset(src)
}

// Reset makes the Reader read a new dump.json from r, keeping its buffers
// and options.
func (r *Reader) Reset(src io.Reader) {
	r.lx.Reset(src)
	r.hdr = Header{}
	r.state, r.index, r.err = 0, 0, nil
}

// Header returns the fields read so far outside "data" (msprobe writes them
// before it, so they are known after the first call to Next).
func (r *Reader) Header() Header { return r.hdr }

// Entry returns the entry read by the last successful Next.
func (r *Reader) Entry() *Entry { return &r.e }

// Err returns the first error met, or nil at a clean end of file. Damage is
// a *FormatError.
func (r *Reader) Err() error { return r.err }

// Raw returns the bytes of the entry just read (from its name to the end of
// its value) when the read window still holds them, else nil. They are
// valid until the next call to Next.
func (r *Reader) Raw() []byte { return r.lx.Buffered(r.e.Offset) }

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int64 { return r.lx.InputOffset() }

// Next reads the next entry. It returns false at the end of the file or at
// the first error.
func (r *Reader) Next() bool {
	if r.err != nil || r.state == 2 {
		return false
	}
	if r.state == 0 {
		if err := r.readUntilData(); err != nil {
			r.fail(err, "")
			return false
		}
		if r.state == 2 {
			return false
		}
	}
	tok, err := r.lx.Next()
	if err != nil {
		r.fail(err, "")
		return false
	}
	if tok.Kind == jsonlex.ObjectEnd {
		if err := r.readTail(); err != nil {
			r.fail(err, "")
		}
		r.state = 2
		return false
	}
	// tok is an entry name.
	e := &r.e
	e.reset()
	clear(r.merged)
	e.Name = nameOf(tok.Bytes)
	e.Offset = tok.Offset
	e.Index = r.index
	r.index++
	if r.opt.Select != nil && !r.opt.Select(e.Name, e.Offset) {
		e.Skipped = true
		var err error
		if len(r.closeLine) > 0 {
			err = r.lx.SkipObjectLines(r.closeLine)
		} else {
			err = r.lx.SkipValueFast()
		}
		if err != nil {
			r.fail(err, e.Name)
			return false
		}
		e.End = r.lx.InputOffset()
		return true
	}
	cuts := r.lx.Cuts()
	if r.entryFast() {
		e.End = r.lx.InputOffset()
		return true
	}
	if err := r.readEntry(); err != nil {
		r.fail(err, e.Name)
		return false
	}
	e.End = r.lx.InputOffset()
	e.CutStrings = r.lx.Cuts() - cuts
	return true
}

// structErr is valid JSON in a shape dump.json never has.
type structErr struct {
	offset int64
	msg    string
}

func (e *structErr) Error() string { return e.msg }

func (r *Reader) fail(err error, entry string) {
	var se *jsonlex.SyntaxError
	var st *structErr
	off := r.lx.InputOffset()
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &st):
		off = st.offset
	}
	r.err = &FormatError{Offset: off, Entry: entry, Err: err}
}

// readUntilData reads the header members up to "data" and its opening brace.
func (r *Reader) readUntilData() error {
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	if tok.Kind != jsonlex.ObjectStart {
		return &structErr{tok.Offset, fmt.Sprintf("dump.json starts with %v, want an object", tok.Kind)}
	}
	nullData := false // "data": null was read
	for {
		tok, err := r.lx.Next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonlex.ObjectEnd {
			r.state = 2
			return r.expectEOF()
		}
		if string(tok.Bytes) == "data" {
			if nullData {
				return &structErr{tok.Offset, "a second \"data\" member, after \"data\": null"}
			}
			tok, err := r.lx.Next()
			if err != nil {
				return err
			}
			switch tok.Kind {
			case jsonlex.ObjectStart:
				r.state = 1
				return nil
			case jsonlex.Null:
				nullData = true
				continue // "data": null, as an empty dump
			}
			return &structErr{tok.Offset, fmt.Sprintf("\"data\" is %v, want an object", tok.Kind)}
		}
		if err := r.headerValue(string(tok.Bytes)); err != nil {
			return err
		}
	}
}

// readTail reads header members after "data" and the end of the file.
func (r *Reader) readTail() error {
	for {
		tok, err := r.lx.Next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonlex.ObjectEnd {
			return r.expectEOF()
		}
		if string(tok.Bytes) == "data" {
			// Python's json keeps the last of duplicated keys; which one
			// msprobe meant cannot be told
			return &structErr{tok.Offset, "a second \"data\" member: the entries of the first were read"}
		}
		if err := r.headerValue(string(tok.Bytes)); err != nil {
			return err
		}
	}
}

func (r *Reader) expectEOF() error {
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	if tok.Kind != jsonlex.EOF {
		return &structErr{tok.Offset, fmt.Sprintf("unexpected %v after the top-level object", tok.Kind)}
	}
	return nil
}

func (r *Reader) headerValue(key string) error {
	var dst *string
	switch key {
	case "task":
		dst = &r.hdr.Task
	case "level":
		dst = &r.hdr.Level
	case "framework":
		dst = &r.hdr.Framework
	case "dump_data_dir":
		dst = &r.hdr.DumpDataDir
	default:
		return r.lx.SkipValue()
	}
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonlex.String:
		*dst = string(tok.Bytes)
	case jsonlex.ObjectStart, jsonlex.ArrayStart:
		return r.skipRest()
	}
	return nil
}

// skipRest skips the rest of a container whose opening token was consumed.
func (r *Reader) skipRest() error {
	depth := r.lx.Depth()
	for r.lx.Depth() >= depth {
		if _, err := r.lx.Next(); err != nil {
			return err
		}
	}
	return nil
}

// fieldByName tells the field a member of an entry names.
func fieldByName(key []byte) (Field, bool) {
	switch string(key) {
	case "input_args":
		return InputArgs, true
	case "input_kwargs":
		return InputKwargs, true
	case "input":
		return Input, true
	case "output":
		return Output, true
	case "parameters":
		return Parameters, true
	}
	return FieldOther, false
}

// readEntry reads an entry's value.
func (r *Reader) readEntry() error {
	e := &r.e
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	if tok.Kind != jsonlex.ObjectStart {
		if isOpen(tok.Kind) {
			return r.skipRest()
		}
		return nil
	}
	r.paramGrads = strings.Contains(e.Name, ".parameters_grad.")
	var seen uint16 // the fields seen, and bit 15 for is_nan
	for member := 0; ; member++ {
		tok, err := r.lx.Next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonlex.ObjectEnd {
			return nil
		}
		key := tok.Bytes
		if !r.paramGrads && e.DuplicateKey == "" {
			if bit := memberBit(key); bit != 0 {
				if seen&bit != 0 {
					e.DuplicateKey = string(key)
				}
				seen |= bit
			}
		}
		var loc slotLoc
		switch {
		case string(key) == "is_nan":
			if err := r.readIsNaN(); err != nil {
				return err
			}
			continue
		case string(key) == "is_recompute":
			tok, err := r.lx.Next()
			if err != nil {
				return err
			}
			e.Recompute = tok.Kind == jsonlex.True
			if isOpen(tok.Kind) {
				if err := r.skipRest(); err != nil {
					return err
				}
			}
			continue
		case r.paramGrads:
			loc = slotLoc{field: ParamGrads, arg: member, key: string(key), top: true}
		default:
			f, _ := fieldByName(key)
			loc = slotLoc{field: f, fieldLevel: true}
		}
		if e.Fields&(1<<loc.field) != 0 && !r.paramGrads {
			// written again: its last occurrence is what the call passed
			e.Last[loc.field] = FieldStart{Tensor: int32(len(e.Tensors)), Arg: int32(len(e.Args))}
			switch loc.field {
			case InputArgs:
				e.NumArgs = 0
			case InputKwargs:
				e.Kwargs = e.Kwargs[:0]
			}
		}
		e.Fields |= 1 << loc.field
		if loc.field == Output {
			e.HasOutput = true
		}
		r.path = r.path[:0]
		if loc.field == ParamGrads {
			r.pushPath(loc.key)
		}
		tok, err = r.lx.Next()
		if err != nil {
			return err
		}
		if err := r.value(tok, loc); err != nil {
			return err
		}
	}
}

func (r *Reader) readIsNaN() error {
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonlex.Number:
		r.e.IsNaN = 1
		if v, err := strconv.ParseFloat(string(tok.Bytes), 64); err == nil && v == 0 {
			r.e.IsNaN = 0
		}
	case jsonlex.True:
		r.e.IsNaN = 1
	case jsonlex.False:
		r.e.IsNaN = 0
	case jsonlex.ObjectStart, jsonlex.ArrayStart:
		return r.skipRest()
	}
	return nil
}

// slotLoc says where a value sits in the entry.
type slotLoc struct {
	field      Field
	arg        int
	key        string
	top        bool // arg/key are set: the value is a top-level slot or below one
	direct     bool // the value is the top-level slot itself
	fieldLevel bool // the value is the field's own value (a list or dict of slots, or one value)
}

// child is the location of the i-th element (or member key) of a container at loc.
func (l slotLoc) child(i int, key string) slotLoc {
	if l.fieldLevel {
		return slotLoc{field: l.field, arg: i, key: key, top: true, direct: true}
	}
	l.direct = false
	if l.top && l.key == "" && key != "" {
		// a dict nested in a positional slot: keep the positional index,
		// name it after the first key level
		l.key = key
	}
	return l
}

func (r *Reader) pushPath(s string) {
	if r.opt.Details {
		r.path = append(r.path, s)
	}
}

func (r *Reader) popPath() {
	if r.opt.Details && len(r.path) > 0 {
		r.path = r.path[:len(r.path)-1]
	}
}

func (r *Reader) slot() string {
	if !r.opt.Details {
		return ""
	}
	return strings.Join(r.path, ".")
}

// value reads one value whose first token is tok.
func (r *Reader) value(tok jsonlex.Token, loc slotLoc) error {
	switch tok.Kind {
	case jsonlex.ArrayStart:
		for i := 0; ; i++ {
			tok, err := r.lx.Next()
			if err != nil {
				return err
			}
			if tok.Kind == jsonlex.ArrayEnd {
				if loc.fieldLevel && loc.field == InputArgs {
					r.e.NumArgs = i
				}
				return nil
			}
			r.pushPath(strconv.Itoa(i))
			if err := r.value(tok, loc.child(i, "")); err != nil {
				return err
			}
			r.popPath()
		}
	case jsonlex.ObjectStart:
		if loc.fieldLevel {
			return r.slotDict(loc)
		}
		return r.object(loc)
	case jsonlex.Null:
		if loc.field == InputKwargs && loc.direct && loc.key == "group" {
			r.addArg(Arg{Field: loc.field, Arg: loc.arg, Key: loc.key, Slot: r.slot(), Null: true, Peer: -1, Tensor: -1})
		}
	case jsonlex.Number, jsonlex.NaN, jsonlex.PosInf, jsonlex.NegInf:
		// a bare number where msprobe writes {"type": ..., "value": ...}
		st := r.stat(tok)
		if tok.Kind == jsonlex.Number {
			st = numberStat(tok.Bytes, true)
		}
		if st.Class != 0 || r.opt.Details {
			r.addArg(Arg{Field: loc.field, Arg: loc.arg, Key: loc.key, Slot: r.slot(), Num: st, Peer: -1, Tensor: -1})
		}
	}
	return nil
}

// slotDict reads a field whose value is an object of slots (input_kwargs,
// parameters): every member is a slot, whatever its name. A positional
// field written so, keyed by position, is read as the list it stands for.
func (r *Reader) slotDict(loc slotLoc) error {
	for member := 0; ; member++ {
		tok, err := r.lx.Next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonlex.ObjectEnd {
			return nil
		}
		name := intern(tok.Bytes)
		if loc.field == InputKwargs {
			r.addKwarg(name)
		}
		child := loc.child(member, name)
		if i, ok := atoi(name); ok && isPositional(loc.field) {
			// {"0": {...}} for [{...}]: the member is the list's item i
			child = loc.child(i, "")
			r.e.KeyedByIndex = true
			if loc.field == InputArgs {
				r.e.NumArgs = max(r.e.NumArgs, i+1)
			}
		}
		tok, err = r.lx.Next()
		if err != nil {
			return err
		}
		r.pushPath(name)
		if err := r.value(tok, child); err != nil {
			return err
		}
		r.popPath()
	}
}

// isPositional reports whether msprobe writes the field as a list, whose
// items are known by position.
func isPositional(f Field) bool { return f == InputArgs || f == Input || f == Output }

// statKey tells the statistic a member key names: 'a' Max, 'i' Min, 'e'
// Mean, 'o' Norm, 0 none; odd is set when the key is not spelled the way
// msprobe spells it ("max", "MIN").
// statBit is the bit of a statistic ('a' Max, 'i' Min, 'e' Mean, 'o' Norm)
// in objState.stats.
func statBit(which byte) uint8 {
	switch which {
	case 'a':
		return 1
	case 'i':
		return 2
	case 'e':
		return 4
	}
	return 8
}

func statName(which byte) string {
	switch which {
	case 'a':
		return "Max"
	case 'i':
		return "Min"
	case 'e':
		return "Mean"
	}
	return "Norm"
}

// memberBit is the bit of an entry member whose repetition is reported:
// the fields and is_nan.
func memberBit(key []byte) uint16 {
	if string(key) == "is_nan" {
		return 1 << 15
	}
	if f, ok := fieldByName(key); ok {
		return 1 << f
	}
	return 0
}

func statKey(key []byte) (which byte, odd bool) {
	if len(key) != 3 && len(key) != 4 {
		return 0, false
	}
	var w byte
	switch {
	case equalFoldASCII(key, "max"):
		w = 'a'
	case equalFoldASCII(key, "min"):
		w = 'i'
	case equalFoldASCII(key, "mean"):
		w = 'e'
	case equalFoldASCII(key, "norm"):
		w = 'o'
	default:
		return 0, false
	}
	return w, key[0] != key[0]&^0x20 || (len(key) > 1 && key[1] == key[1]&^0x20)
}

// equalFoldASCII reports whether b is the lower-case word w in any case.
func equalFoldASCII(b []byte, w string) bool {
	if len(b) != len(w) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}

// object reads an object whose opening brace was consumed: a tensor, a typed
// scalar, a process group, a P2POp, or a plain dict holding any of these.
func (r *Reader) object(loc slotLoc) error {
	e := &r.e
	var o objState
	o.firstTensor, o.firstArg = len(e.Tensors), len(e.Args)
	o.peer = -1
	r.shape = r.shape[:0]
	r.groupRanks = r.groupRanks[:0]
	fast := r.tensorFast(&o)
	for member := 0; !fast; member++ {
		tok, err := r.lx.Next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonlex.ObjectEnd {
			break
		}
		key := tok.Bytes
		if which, odd := statKey(key); which != 0 {
			// key is only valid until the next token
			o.tensorKeys = true
			if odd && (which == 'a' || which == 'i') {
				e.OddStatKeys = true
			}
			tok, err := r.lx.Next()
			if err != nil {
				return err
			}
			var st Stat
			if isOpen(tok.Kind) {
				if err := r.skipRest(); err != nil {
					return err
				}
				st = Stat{Kind: StatOther}
			} else {
				st = r.stat(tok)
			}
			if (which == 'a' || which == 'i') && (st.Kind == StatOther || st.Kind == StatString) {
				e.OddStats++
			}
			if seen := o.stats & statBit(which); seen != 0 && e.DuplicateKey == "" {
				e.DuplicateKey = statName(which)
			}
			o.stats |= statBit(which)
			switch which {
			case 'a':
				o.max = st
			case 'i':
				o.min = st
			case 'e':
				o.mean = st
			case 'o':
				o.norm = st
			}
			continue
		}
		switch string(key) {
		case "type":
			o.hasType = true
			if o.typ, err = r.shortString(); err != nil {
				return err
			}
			continue
		case "dtype":
			o.tensorKeys = true
			if r.opt.Details {
				if o.dtype, err = r.shortString(); err != nil {
					return err
				}
				continue
			}
		case "shape":
			o.tensorKeys = true
			if err := r.readShape(&o); err != nil {
				return err
			}
			continue
		case "requires_grad":
			tok, err := r.lx.Next()
			if err != nil {
				return err
			}
			o.requiresGrad = tok.Kind == jsonlex.True
			if isOpen(tok.Kind) {
				if err := r.skipRest(); err != nil {
					return err
				}
			}
			continue
		case "data_name":
			o.tensorKeys = true
			if r.opt.Details {
				if o.dataName, err = r.shortString(); err != nil {
					return err
				}
				continue
			}
		case "md5":
			o.checksum = true
		case "value":
			if o.hasType || o.tensorKeys {
				if err := r.readScalar(&o); err != nil {
					return err
				}
				continue
			}
			// no type yet: a member like any other, which holds its value
			// if no "type" follows (then it is the value of a typed one)
			tok, err := r.lx.Next()
			if err != nil {
				return err
			}
			o.hasValue = true
			switch tok.Kind {
			case jsonlex.String:
				if st := stringStat(tok.Bytes); st.Class != 0 {
					o.num = st
				}
				if len(tok.Bytes) <= 256 {
					o.str = intern(tok.Bytes)
				}
			case jsonlex.Null:
				o.null = true
			case jsonlex.Number:
				o.num = numberStat(tok.Bytes, true)
			case jsonlex.NaN, jsonlex.PosInf, jsonlex.NegInf, jsonlex.True, jsonlex.False:
				o.num = r.stat(tok)
			}
			r.pushPath("value")
			if err := r.value(tok, loc.child(member, "value")); err != nil {
				return err
			}
			r.popPath()
			continue
		case "group_ranks":
			if err := r.readInts(&r.groupRanks); err != nil {
				return err
			}
			o.hasGroup = true
			continue
		case "group_id", "process_group_id":
			if o.groupID, err = r.shortString(); err != nil {
				return err
			}
			o.hasGroup = true
			continue
		case "class_type":
			if o.classType, err = r.shortString(); err != nil {
				return err
			}
			continue
		case "op":
			if o.classType != "" {
				if o.op, err = r.shortString(); err != nil {
					return err
				}
				continue
			}
		case "tag":
			if o.classType != "" {
				if err := r.lx.SkipValue(); err != nil {
					return err
				}
				continue
			}
		case "peer":
			tok, err := r.lx.Next()
			if err != nil {
				return err
			}
			if tok.Kind == jsonlex.Number {
				if n, err := strconv.Atoi(string(tok.Bytes)); err == nil {
					o.peer = n
				}
			} else if isOpen(tok.Kind) {
				if err := r.skipRest(); err != nil {
					return err
				}
			}
			continue
		}
		// Anything else: inside something that is plainly a tensor, skip it
		// (device_mesh, placements, ...), and inside an object with a type
		// (its value, if any, is read above); otherwise it may hold tensors.
		if o.tensorKeys || o.hasType || isTensorType(o.typ) {
			if err := r.lx.SkipValue(); err != nil {
				return err
			}
			continue
		}
		name := string(key)
		tok, err = r.lx.Next()
		if err != nil {
			return err
		}
		r.pushPath(name)
		if err := r.value(tok, loc.child(member, name)); err != nil {
			return err
		}
		r.popPath()
	}
	if o.hasType || o.stats&(statBit('a')|statBit('i')) != 0 {
		// a tensor (Max or Min), or an object with a type (a tensor, a
		// value, a ProcessGroup, an unknown class): what its other members
		// hold is not a value of the call, even those read before the key
		// that told it
		if len(e.Tensors) > o.firstTensor {
			e.Tensors = e.Tensors[:o.firstTensor]
		}
		if len(e.Args) > o.firstArg {
			e.Args = e.Args[:o.firstArg]
		}
	}
	r.finishObject(&o, loc)
	return nil
}

// objState collects the members of an object until its end tells what it was.
type objState struct {
	typ, dtype, dataName, groupID, classType, op, str string
	max, min, mean, norm, num                         Stat
	peer, firstTensor, firstArg                       int
	tensorKeys, requiresGrad, empty, checksum         bool
	hasType                                           bool  // a "type" member, of any kind
	stats                                             uint8 // the statistics seen, by statBit
	hasGroup, hasValue, null                          bool
}

func (r *Reader) finishObject(o *objState, loc slotLoc) {
	e := &r.e
	switch {
	case strings.Contains(o.classType, "P2POp"):
		a := Arg{Field: loc.field, Arg: loc.arg, Key: loc.key, Slot: r.slot(), Type: o.classType, Op: o.op, Peer: o.peer, Tensor: -1}
		if len(e.Tensors) > o.firstTensor {
			a.Tensor = o.firstTensor
		}
		r.addArg(a)
	case o.tensorKeys || isTensorType(o.typ):
		t := Tensor{
			Field: loc.field, Arg: loc.arg, Key: loc.key, Slot: r.slot(),
			Max: o.max, Min: o.min, Mean: o.mean, Norm: o.norm,
			RequiresGrad: o.requiresGrad, Empty: o.empty, Checksum: o.checksum,
			Type: o.typ, Dtype: o.dtype, DataName: o.dataName,
		}
		if r.opt.Details {
			t.Shape = append([]int(nil), r.shape...)
		}
		r.addTensor(t)
	case o.hasGroup || o.typ == "torch.ProcessGroup":
		r.addArg(Arg{Field: loc.field, Arg: loc.arg, Key: loc.key, Slot: r.slot(), Type: o.typ,
			GroupRanks: append([]int(nil), r.groupRanks...), GroupID: o.groupID, Peer: -1, Tensor: -1})
	case o.hasType && o.hasValue: // a "type" of any value, "" included
		num := o.num
		if o.typ == "str" {
			num = Stat{} // a string argument, even "nan", is not a number
		}
		r.addArg(Arg{Field: loc.field, Arg: loc.arg, Key: loc.key, Slot: r.slot(), Type: o.typ,
			Num: num, Str: o.str, Null: o.null, Peer: -1, Tensor: -1})
	}
}

func isTensorType(t string) bool {
	return strings.HasSuffix(t, "Tensor") || strings.HasSuffix(t, "ndarray")
}

func isOpen(k jsonlex.Kind) bool { return k == jsonlex.ObjectStart || k == jsonlex.ArrayStart }

// shortString reads a value expected to be a short string; anything else
// gives "". Long strings are cut to keep memory small.
func (r *Reader) shortString() (string, error) {
	tok, err := r.lx.Next()
	if err != nil {
		return "", err
	}
	switch tok.Kind {
	case jsonlex.String:
		return intern(tok.Bytes), nil
	case jsonlex.ObjectStart, jsonlex.ArrayStart:
		return "", r.skipRest()
	}
	return "", nil
}

// Frequent strings are shared instead of allocated each time.
var interned = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"torch.Tensor", "mindspore.Tensor", "numpy.ndarray", "int", "float", "bool", "str", "slice",
		"torch.ProcessGroup", "torch.distributed.ReduceOp", "torch.dtype", "torch.device", "torch.Size",
		"torch.float32", "torch.float16", "torch.bfloat16", "torch.int64", "torch.int32", "torch.bool",
		"Float32", "Float16", "BFloat16", "Int64", "Int32", "Bool",
	} {
		m[s] = s
	}
	return m
}()

func intern(b []byte) string {
	if string(b) == "torch.Tensor" {
		return "torch.Tensor"
	}
	if s, ok := interned[string(b)]; ok {
		return s
	}
	if len(b) > 4096 {
		b = b[:4096]
	}
	return string(b)
}

func (r *Reader) readShape(o *objState) error {
	r.shape = r.shape[:0] // a shape written twice: the last one
	return r.numbers(func(lit []byte) { r.shapeItem(lit, o) })
}

// shapeItem takes one number of a shape.
func (r *Reader) shapeItem(lit []byte, o *objState) {
	if len(lit) == 1 && lit[0] == '0' {
		o.empty = true
	}
	if r.opt.Details {
		n, _ := strconv.Atoi(string(lit))
		r.shape = append(r.shape, n)
	}
}

func (r *Reader) readInts(dst *[]int) error {
	return r.numbers(func(lit []byte) {
		if n, err := strconv.Atoi(string(lit)); err == nil && len(*dst) < 1<<16 {
			*dst = append(*dst, n)
		}
	})
}

// numbers reads a value expected to be a list of numbers, calling fn with
// each number's literal; anything else in it is skipped.
func (r *Reader) numbers(fn func(lit []byte)) error {
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	if tok.Kind != jsonlex.ArrayStart {
		if isOpen(tok.Kind) {
			return r.skipRest()
		}
		return nil
	}
	for {
		tok, err := r.lx.Next()
		if err != nil {
			return err
		}
		switch tok.Kind {
		case jsonlex.ArrayEnd:
			return nil
		case jsonlex.Number:
			fn(tok.Bytes)
		case jsonlex.ObjectStart, jsonlex.ArrayStart:
			if err := r.skipRest(); err != nil {
				return err
			}
		}
	}
}

// readScalar reads the "value" member of a typed scalar.
func (r *Reader) readScalar(o *objState) error {
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	o.hasValue = true
	switch tok.Kind {
	case jsonlex.String:
		if st := stringStat(tok.Bytes); st.Class != 0 {
			o.num = st
		}
		if len(tok.Bytes) <= 256 {
			o.str = intern(tok.Bytes)
		}
	case jsonlex.Null:
		o.null = true
	case jsonlex.ObjectStart, jsonlex.ArrayStart:
		return r.skipRest()
	case jsonlex.Number:
		o.num = numberStat(tok.Bytes, true)
	default:
		o.num = r.stat(tok)
	}
	return nil
}

// stat reads a statistic token.
func (r *Reader) stat(tok jsonlex.Token) Stat {
	switch tok.Kind {
	case jsonlex.Number:
		return numberStat(tok.Bytes, r.opt.Details)
	case jsonlex.NaN:
		return Stat{Kind: StatNumber, Class: NaN, Value: math.NaN()}
	case jsonlex.PosInf:
		return Stat{Kind: StatNumber, Class: PosInf, Value: math.Inf(1)}
	case jsonlex.NegInf:
		return Stat{Kind: StatNumber, Class: NegInf, Value: math.Inf(-1)}
	case jsonlex.True:
		return Stat{Kind: StatBool, Value: 1}
	case jsonlex.False:
		return Stat{Kind: StatBool}
	case jsonlex.Null:
		return Stat{Kind: StatNull}
	case jsonlex.String:
		if st := stringStat(tok.Bytes); st.Class != 0 {
			return st
		}
		if isNumberLiteral(tok.Bytes) {
			return numberStat(tok.Bytes, r.opt.Details) // a number written as a string: "0.001"
		}
		return Stat{Kind: StatString}
	}
	return Stat{}
}

// isNumberLiteral reports whether b is a JSON number literal (optionally
// with a leading '+', as Python's str() never writes but hand-made files do).
func isNumberLiteral(b []byte) bool {
	if len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	digits, i := 0, 0
	for ; i < len(b) && isDigit(b[i]); i++ {
		digits++
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && isDigit(b[i]); i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(b) && isDigit(b[i]); i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(b)
}

// maxNumberLen is the longest number literal read as a value: Python's
// repr of a float is at most 24 bytes; a literal of 100 digits is not a
// statistic msprobe writes, and is read as unknown rather than overflowing.
const maxNumberLen = 100

// numberStat classifies a JSON number literal. Any literal is finite unless
// it overflows float64 (1e309), which only a long literal or one with an
// exponent can do; only those, or all with details, are parsed.
func numberStat(lit []byte, details bool) Stat {
	if !details && len(lit) < 24 && !mayOverflow(lit) {
		return Stat{Kind: StatNumber}
	}
	if len(lit) > maxNumberLen {
		return Stat{Kind: StatString} // no statistic is written like this
	}
	v, _ := strconv.ParseFloat(string(lit), 64)
	st := Stat{Kind: StatNumber, Value: v}
	switch {
	case math.IsInf(v, 1):
		st.Class = PosInf
	case math.IsInf(v, -1):
		st.Class = NegInf
	}
	return st
}

// mayOverflow reports whether a number literal shorter than 24 bytes may
// be too large for a float64 (see exponentMayOverflow).
func mayOverflow(lit []byte) bool {
	for i, c := range lit {
		if c|0x20 == 'e' {
			return exponentMayOverflow(lit[i+1:])
		}
	}
	return false
}

// exponentMayOverflow reports whether the exponent exp (what follows the
// 'e' of a literal shorter than 24 bytes) may make it too large for a
// float64: only when it is not negative and has three digits or more
// (twenty digits times 1e99 is finite).
func exponentMayOverflow(exp []byte) bool {
	if len(exp) > 0 && (exp[0] == '-' || exp[0] == '+') {
		if exp[0] == '-' {
			return false
		}
		exp = exp[1:]
	}
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:] // e+0400 is e+400
	}
	return len(exp) >= 3
}

// stringStat reads the string spellings older dumps and mocks use for
// non-finite statistics: "nan", "inf", "-inf", "Infinity", ...
func stringStat(b []byte) Stat {
	c, ok := nonfinite.Parse(b)
	if !ok {
		return Stat{}
	}
	return Stat{Kind: StatNumber, Class: c, Value: c.Float()}
}
