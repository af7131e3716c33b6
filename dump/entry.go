package dump

import "github.com/nanhunt/nanhunt/internal/nonfinite"

// Class is a set of non-finite values: NaN, +Inf, -Inf, or several of
// them; the zero Class is finite. String names it ("nan", "inf", "-inf",
// "nan,inf"), Kind says what a verdict calls it, Float gives its value.
type Class = nonfinite.Class

// StatKind says what a statistic field held.
type StatKind uint8

const (
	StatAbsent StatKind = iota // no such key
	StatNull                   // null: empty, meta or unsupported tensor
	StatNumber
	StatBool
	StatString // a string that is neither a number nor a non-finite spelling
	StatOther  // an object or a list
)

// Stat is one statistic (Max, Min, Mean or Norm) of a tensor.
type Stat struct {
	Kind  StatKind
	Class Class   // non-finite value of a number
	Value float64 // the number; NaN/±Inf as such; bool as 0/1; set only when the reader was asked for details, or when the number is not finite
}

// Field is the part of an entry a value was found in.
type Field uint8

const (
	FieldOther  Field = iota // a key nanhunt does not know
	InputArgs                // forward: positional arguments
	InputKwargs              // forward: keyword arguments
	Input                    // backward: gradients of the forward outputs
	Output                   // forward: return value; backward: gradients of the inputs
	Parameters               // module forward: the module's parameters
	ParamGrads               // parameters_grad entries: one member per parameter
)

var fieldNames = [...]string{"other", "input_args", "input_kwargs", "input", "output", "parameters", "parameters_grad"}

func (f Field) String() string {
	if int(f) < len(fieldNames) {
		return fieldNames[f]
	}
	return "other"
}

// IsInput reports whether values in the field flow into the call.
func (f Field) IsInput() bool {
	return f == InputArgs || f == InputKwargs || f == Input || f == Parameters
}

// Tensor is a tensor's record in dump.json.
type Tensor struct {
	Field Field
	Arg   int    // position of the top-level value within the field
	Key   string // member name of the top-level value when the field is an object (kwarg or parameter name)
	Slot  string // full path below the field, e.g. "0", "0.2", "weight", "0.tensor"; set only with details

	Max, Min, Mean, Norm Stat

	RequiresGrad bool
	Empty        bool // a dimension of its shape is 0
	Checksum     bool // has an "md5" field (summary_mode md5 or xor)

	// Set only with details.
	Type, Dtype, DataName string
	Shape                 []int
}

// HasStats reports whether Max or Min was recorded as a number or bool.
func (t *Tensor) HasStats() bool {
	return t.Max.Kind == StatNumber || t.Min.Kind == StatNumber || t.Max.Kind == StatBool || t.Min.Kind == StatBool
}

// Arg is a non-tensor value: a typed scalar ({"type": "int", "value": 4}),
// a process group, or a P2POp of batch_isend_irecv.
type Arg struct {
	Field Field
	Arg   int
	Key   string
	Slot  string // set only with details

	Type string // "int", "float", "str", "torch.ProcessGroup", "torch.distributed.P2POp", ...
	Num  Stat   // numeric value (Kind StatNumber/StatBool); Class set when not finite
	Str  string // string value (kept for short strings)
	Null bool   // the value was null: for a "group" kwarg, a group that was not recorded

	GroupRanks []int  // process group ranks
	GroupID    string // process group id

	Op     string // P2POp: "isend" or "irecv" (as written)
	Peer   int    // P2POp peer; -1 when absent
	Tensor int    // P2POp: index of its tensor in Entry.Tensors; -1 when none
}

// Entry is one member of dump.json's "data": one recorded call.
type Entry struct {
	Index  int    // position in "data", from 0: execution order
	Name   string // exact entry name
	Offset int64  // byte offset of the name in dump.json
	End    int64  // byte offset just past the entry's value

	Tensors []Tensor
	Args    []Arg

	IsNaN     int8 // nan_check task: 1 overflow flagged, 0 clean, -1 absent or null
	HasOutput bool // an "output" key was present
	Fields    uint16
	Skipped   bool // ReaderOptions.Select passed it by: only name, index and range are set

	// NumArgs is the number of items of input_args, null items included;
	// Kwargs the keys of input_kwargs in the order they were written
	// (msprobe records a collective's output as the positional arguments
	// followed by the keyword arguments in that order).
	NumArgs int
	Kwargs  []string
	// Recompute: msprobe marked the call "is_recompute": true (a forward
	// call re-run by activation checkpointing during the backward).
	Recompute bool
	// OddStatKeys: a Max or Min key was spelled otherwise than msprobe
	// spells it ("max", "MIN"), and read all the same.
	OddStatKeys bool
	// KeyedByIndex: a positional field (input_args, input, output) was
	// written as an object keyed by position ({"0": {...}}), as the
	// nan-overflow-detection skill documents, where msprobe writes a list;
	// its members were read as the items of that list.
	KeyedByIndex bool
	// Merged counts the values past the 16,384 kept one by one (of
	// tensors, and of other values) that were merged into summaries or
	// dropped: the tensors past that bound are merged into one summary
	// tensor per field and set of non-finite statistics (no non-finite
	// value is lost, only its position), further non-tensor values are
	// kept only when not finite (merged the same way), and further
	// keyword names are not kept.
	Merged int
	// CutStrings counts the string values longer than the reader keeps
	// (1 MiB), of which only the beginning was read.
	CutStrings int
	// OddStats counts the Max and Min values that are no statistic: an
	// object, a list, or a string that is neither a number nor a
	// non-finite spelling.
	OddStats int
	// DuplicateKey is the first member name written twice in the entry or
	// in one of its tensors ("" when none). The values of a field written
	// twice are all read; of a statistic written twice, the last.
	DuplicateKey string
	// last is, per field, where its last occurrence's values start in
	// Tensors and Args: all zero unless a field was written twice. What
	// a call passed (a collective's slots) is its last occurrence
	// (TensorInLast, ArgInLast).
	last [ParamGrads + 1]fieldStart
}

// fieldStart is where a field's values start in Entry.Tensors and Args.
type fieldStart struct{ Tensor, Arg int32 }

// TensorInLast reports whether Tensors[i] comes from the last occurrence of
// its field.
func (e *Entry) TensorInLast(i int) bool {
	f := e.Tensors[i].Field
	return int(f) >= len(e.last) || i >= int(e.last[f].Tensor)
}

// ArgInLast reports whether Args[i] comes from the last occurrence of its
// field.
func (e *Entry) ArgInLast(i int) bool {
	f := e.Args[i].Field
	return int(f) >= len(e.last) || i >= int(e.last[f].Arg)
}

// Has reports whether the entry had the given field.
func (e *Entry) Has(f Field) bool { return e.Fields&(1<<f) != 0 }

func (e *Entry) reset() {
	e.Tensors = e.Tensors[:0]
	e.Args = e.Args[:0]
	e.IsNaN = -1
	e.HasOutput = false
	e.Fields = 0
	e.last = [ParamGrads + 1]fieldStart{}
	e.Skipped = false
	e.NumArgs = 0
	e.Kwargs = e.Kwargs[:0]
	e.Recompute = false
	e.OddStatKeys = false
	e.KeyedByIndex = false
	e.Merged = 0
	e.CutStrings = 0
	e.OddStats = 0
	e.DuplicateKey = ""
}

// Header is the top of dump.json, outside "data".
type Header struct {
	Task        string
	Level       string
	Framework   string // "" when absent (writers before 2025-01)
	DumpDataDir string
}
