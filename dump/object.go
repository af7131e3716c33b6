package dump

import (
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

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
		key := tok.Bytes // valid only until the next token
		if which, odd := statKey(key); which != 0 {
			if err := r.statMember(&o, which, odd); err != nil {
				return err
			}
			continue
		}
		if done, err := r.knownMember(&o, key, loc, member); done || err != nil {
			if err != nil {
				return err
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
		if err := r.member(name, loc.child(member, name)); err != nil {
			return err
		}
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

// member reads the value of a member named name, which may hold values of
// the call, at loc.
func (r *Reader) member(name string, loc slotLoc) error {
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	r.pushPath(name)
	if err := r.value(tok, loc); err != nil {
		return err
	}
	r.popPath()
	return nil
}

// statMember reads the value of a statistic's member (which: see statKey).
func (r *Reader) statMember(o *objState, which byte, odd bool) error {
	e := &r.e
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
	return nil
}

// knownMember reads the value of a member that tells what the object is
// (type, dtype, shape, ..., a P2POp's op and peer), and reports false,
// reading nothing, for any other member and for those it leaves to be
// read as any other (dtype and data_name without details, md5, an op or
// tag outside a P2POp).
func (r *Reader) knownMember(o *objState, key []byte, loc slotLoc, member int) (done bool, err error) {
	switch string(key) {
	case "type":
		o.hasType = true
		o.typ, err = r.shortString()
		return true, err
	case "dtype":
		o.tensorKeys = true
		if r.opt.Details {
			o.dtype, err = r.shortString()
			return true, err
		}
	case "shape":
		o.tensorKeys = true
		return true, r.readShape(o)
	case "requires_grad":
		tok, err := r.lx.Next()
		if err != nil {
			return true, err
		}
		o.requiresGrad = tok.Kind == jsonlex.True
		if isOpen(tok.Kind) {
			return true, r.skipRest()
		}
		return true, nil
	case "data_name":
		o.tensorKeys = true
		if r.opt.Details {
			o.dataName, err = r.shortString()
			return true, err
		}
	case "md5":
		o.checksum = true
	case "value":
		if o.hasType || o.tensorKeys {
			return true, r.readScalar(o)
		}
		return true, r.untypedValue(o, loc.child(member, "value"))
	case "group_ranks":
		o.hasGroup = true
		return true, r.readInts(&r.groupRanks)
	case "group_id", "process_group_id":
		o.hasGroup = true
		o.groupID, err = r.shortString()
		return true, err
	case "class_type":
		o.classType, err = r.shortString()
		return true, err
	case "op":
		if o.classType != "" {
			o.op, err = r.shortString()
			return true, err
		}
	case "tag":
		if o.classType != "" {
			return true, r.lx.SkipValue()
		}
	case "peer":
		return true, r.readPeer(o)
	}
	return false, nil
}

// untypedValue reads a "value" member before any "type": a member like any
// other, at loc, which holds the object's value if no "type" follows (then
// it is the value of a typed one).
func (r *Reader) untypedValue(o *objState, loc slotLoc) error {
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
	if err := r.value(tok, loc); err != nil {
		return err
	}
	r.popPath()
	return nil
}

// readPeer reads a P2POp's peer: a number, else none (-1).
func (r *Reader) readPeer(o *objState) error {
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	if tok.Kind == jsonlex.Number {
		if n, err := strconv.Atoi(string(tok.Bytes)); err == nil {
			o.peer = n
		}
	} else if isOpen(tok.Kind) {
		return r.skipRest()
	}
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
