package monitor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nanhunt/nanhunt/internal/nonfinite"
)

// anKind is the kind of non-finite value a tensor row shows.
type anKind int8

const (
	anNone anKind = iota
	anNaN
	anPosInf
	anNegInf
	anInf // infinite with both signs, or only the (unsigned) norm
)

var anNames = [...]string{"", "nan", "+inf", "-inf", "inf"}

func (k anKind) String() string { return anNames[k] }

// anomaly is the verdict on one tensor row.
type anomaly struct {
	kind anKind
	weak bool // only the norm is infinite, or a statistic is nan while the nans count is 0
	skip bool // the monitor's placeholder for a non-tensor value: every statistic nan
}

// judge decides whether a tensor's statistics show a NaN or an Inf.
//
// The rules, in order:
//   - a nans count of nan, or a shape of nan, is TrainerMon's placeholder
//     for a non-tensor input or output (every statistic filled with nan):
//     skipped, not an anomaly;
//   - a tensor with no elements (a 0 in its shape) has nan min, max and
//     mean without holding a NaN: clean;
//   - a positive nans count is a NaN;
//   - a nan min, max, mean or norm is a NaN, unless the nans count is
//     recorded as 0 and a statistic is infinite (mean of +inf and -inf);
//     with a nans count of 0 and no infinity it is kept but marked weak;
//   - an infinite min, max or mean is an Inf with its sign (+inf, -inf, or
//     inf when both signs show);
//   - an infinite norm alone is an Inf marked weak: the norm of a finite
//     tensor overflows when the monitor computes it in a narrow dtype.
func judge(c *[numStats]cell, shape []byte, hasShape bool) anomaly {
	if c[sNans].class == vNaN || (hasShape && isNaNWord(shape)) {
		return anomaly{skip: true}
	}
	if hasShape && emptyShape(shape) {
		return anomaly{}
	}
	nansRecorded := c[sNans].class == vFinite || c[sNans].class == vPosInf || c[sNans].class == vNegInf
	nanStat, pos, neg := false, false, false
	for _, k := range [...]int{sMin, sMax, sMean} {
		switch c[k].class {
		case vNaN:
			nanStat = true
		case vPosInf:
			pos = true
		case vNegInf:
			neg = true
		}
	}
	normInf := c[sNorm].class == vPosInf || c[sNorm].class == vNegInf
	if c[sNorm].class == vNaN {
		nanStat = true
	}
	switch {
	case c[sNans].positive():
		return anomaly{kind: anNaN}
	case nanStat && !(nansRecorded && (pos || neg || normInf)):
		return anomaly{kind: anNaN, weak: nansRecorded}
	case pos && neg:
		return anomaly{kind: anInf}
	case pos:
		return anomaly{kind: anPosInf}
	case neg:
		return anomaly{kind: anNegInf}
	case normInf:
		return anomaly{kind: anInf, weak: !nanStat}
	}
	return anomaly{}
}

// emptyShape reports whether a shape cell like "[4, 0]" has a zero
// dimension.
func emptyShape(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return false
	}
	b = b[1 : len(b)-1]
	for len(b) > 0 {
		d := b
		if i := bytes.IndexByte(b, ','); i >= 0 {
			d, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if d = bytes.TrimSpace(d); len(d) == 1 && d[0] == '0' {
			return true
		}
	}
	return false
}

// asSyntax unwraps a *syntaxError.
func asSyntax(err error) (*syntaxError, bool) {
	var se *syntaxError
	if errors.As(err, &se) {
		return se, true
	}
	return nil, false
}

// tensorRow is one tensor's statistics from a data record, as the scanner
// hands it to a sink. Its byte slices are valid only during the call.
type tensorRow struct {
	kind   kind
	step   int
	micro  int // -1: not recorded
	vpp    int // -1: not recorded
	module []byte
	tensor []byte
	side   side
	an     anomaly
	line   int
	fields [][]byte
	cols   *sideCols
	lay    *layout
}

// value returns the text of a statistic or "" when it is not recorded.
func (t *tensorRow) value(k int) string {
	if i := t.cols.stat[k]; i >= 0 && i < len(t.fields) {
		return string(t.fields[i])
	}
	return ""
}

// cellText returns the text of a layout column or "".
func (t *tensorRow) cellText(i int) string {
	if i >= 0 && i < len(t.fields) {
		return string(t.fields[i])
	}
	return ""
}

// sink receives what a scanner reads.
type sink interface {
	row(t *tensorRow)
	record() // one data record read (before it is checked)
	warn(line int, msg string)
}

// recordSource yields CSV records: the fast recordReader, or encoding/csv
// in tests.
type recordSource interface {
	next() ([][]byte, error)
	line() int             // first line of the record last returned
	endedWithoutEOL() bool // the last line read had no line end
}

func (r *recordReader) line() int             { return r.recLine }
func (r *recordReader) endedWithoutEOL() bool { return r.noEOL }

// scanner turns the records of one monitor CSV file into tensor rows.
type scanner struct {
	kind     kind // the file's kind; kModuleV2: read from the scope column
	classify func([]byte) cell
	sink     sink
	style    string // header style, once read
	row      tensorRow
	cells    [][numStats]cell
}

// scan reads a whole file. It returns false when the file has no usable
// header.
func (s *scanner) scan(src recordSource) bool {
	var lay *layout
	for lay == nil {
		fields, err := src.next()
		if err == io.EOF {
			s.sink.warn(0, "empty file")
			return false
		}
		if se, ok := asSyntax(err); ok {
			s.sink.warn(se.line, "header: "+se.msg)
			return false
		}
		if err != nil {
			s.sink.warn(src.line(), fmt.Sprintf("read: %v", err))
			return false
		}
		lay, err = parseHeader(fields)
		if err != nil {
			s.sink.warn(src.line(), fmt.Sprintf("not a monitor csv header (%v): file skipped", err))
			return false
		}
	}
	s.style = lay.style
	if len(lay.unknown) > 0 {
		s.sink.warn(src.line(), "unknown columns ignored: "+strings.Join(lay.unknown, ", "))
	}
	if s.kind == kModuleV2 && lay.scope < 0 {
		s.sink.warn(src.line(), "monitor_v2 file without a scope column: file skipped")
		return false
	}
	s.cells = append(s.cells[:0], make([][numStats]cell, len(lay.sides))...)
	for {
		fields, err := src.next()
		if err != nil {
			if err == io.EOF {
				return true
			}
			if se, ok := asSyntax(err); ok {
				s.sink.record()
				s.garbage(src, se.line, se.msg)
				continue
			}
			s.sink.warn(src.line(), fmt.Sprintf("read: %v", err))
			return true
		}
		s.sink.record()
		if len(fields) != lay.ncol {
			if lay.isHeaderRepeat(fields) {
				s.sink.warn(src.line(), "header repeated inside the file: skipped")
				continue
			}
			s.garbage(src, src.line(), fmt.Sprintf("%d fields, the header has %d", len(fields), lay.ncol))
			continue
		}
		if msg := s.decode(lay, fields, src.line()); msg != "" {
			if lay.isHeaderRepeat(fields) {
				s.sink.warn(src.line(), "header repeated inside the file: skipped")
				continue
			}
			s.garbage(src, src.line(), msg)
			continue
		}
		if src.endedWithoutEOL() {
			s.sink.warn(src.line(), "last line has no line end: the file may have been cut")
		}
	}
}

func (s *scanner) garbage(src recordSource, line int, msg string) {
	if src.endedWithoutEOL() {
		s.sink.warn(line, "truncated last line skipped: "+msg)
		return
	}
	s.sink.warn(line, "malformed line skipped: "+msg)
}

// decode checks one record and hands its tensors to the sink; it returns
// why the record is unusable, or "".
func (s *scanner) decode(lay *layout, fields [][]byte, line int) string {
	t := &s.row
	t.line, t.fields, t.lay = line, fields, lay
	step, ok := parseInt(fields[lay.step])
	if !ok {
		return fmt.Sprintf("step %q is not an integer", clip(fields[lay.step]))
	}
	t.step = step
	t.micro, t.vpp = -1, -1
	if lay.micro >= 0 && len(fields[lay.micro]) > 0 {
		if t.micro, ok = parseInt(fields[lay.micro]); !ok {
			return fmt.Sprintf("micro_step %q is not an integer", clip(fields[lay.micro]))
		}
	}
	if lay.vpp >= 0 && len(fields[lay.vpp]) > 0 {
		if t.vpp, ok = parseInt(fields[lay.vpp]); !ok {
			return fmt.Sprintf("vpp_stage %q is not an integer", clip(fields[lay.vpp]))
		}
	}
	t.kind = s.kind
	if lay.scope >= 0 {
		k, ok := v2Scope[string(fields[lay.scope])]
		if !ok {
			return fmt.Sprintf("unknown scope %q", clip(fields[lay.scope]))
		}
		if k == kNone {
			return ""
		}
		t.kind = k
	}
	name := fields[lay.name]
	if len(name) == 0 {
		return "empty name"
	}
	for i := range lay.sides {
		c := &lay.sides[i]
		for k, col := range c.stat {
			if col < 0 {
				s.cells[i][k] = cell{class: vMissing}
				continue
			}
			s.cells[i][k] = s.classify(fields[col])
			if s.cells[i][k].class == vInvalid {
				return fmt.Sprintf("%s %q is not a number", statNames[k], clip(fields[col]))
			}
		}
	}
	var shape []byte
	if lay.shape >= 0 {
		shape = fields[lay.shape]
	}
	module, micro := name, t.micro
	if lay.style == StyleV1Old && t.kind.activation() && lay.micro < 0 {
		module, micro = splitMicro(name)
	}
	for i := range lay.sides {
		c := &lay.sides[i]
		t.cols = c
		t.micro = micro
		t.module, t.tensor, t.side = module, nil, sideNone
		if c.tensor != "" {
			t.tensor, t.side = c.tensorB, c.side
		} else if t.kind.activation() {
			t.module, t.tensor, t.side = splitTensor(module, t.kind, lay.style)
		}
		t.an = judge(&s.cells[i], shape, lay.shape >= 0)
		if t.kind == kActv && t.an.kind == anNegInf {
			// -inf alone in a forward activation is what an attention
			// mask holds: kept, but weak, as an infinite norm is
			t.an.weak = true
		}
		s.sink.row(t)
	}
	return ""
}

// v2Role maps monitor_v2's tensor roles to sides.
var v2Role = map[string]side{
	"input":       sideIn,
	"output":      sideOut,
	"grad_output": sideIn,
	"grad_input":  sideOut,
}

// splitMicro splits an old-style activation name "{module}_{micro_step}".
func splitMicro(name []byte) ([]byte, int) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) || i < 2 || name[i-1] != '_' {
		return name, -1
	}
	n, ok := parseInt(name[i:])
	if !ok {
		return name, -1
	}
	return name[:i-1], n
}

// splitTensor splits an activation name into module and tensor:
// TrainerMon "{module}.input", "{module}.output_1"; monitor_v2
// "{module}.grad_input.0". It returns the whole name as the module and no
// tensor when the name has no such suffix.
func splitTensor(name []byte, k kind, style string) (module, tensor []byte, sd side) {
	dot := bytes.LastIndexByte(name, '.')
	if dot <= 0 {
		return name, nil, sideNone
	}
	if style == StyleV2 {
		if !allDigits(name[dot+1:]) {
			return name, nil, sideNone
		}
		d2 := bytes.LastIndexByte(name[:dot], '.')
		if d2 <= 0 {
			return name, nil, sideNone
		}
		if sd, ok := v2Role[string(name[d2+1:dot])]; ok {
			return name[:d2], name[d2+1:], sd
		}
		return name, nil, sideNone
	}
	suf := name[dot+1:]
	base := suf
	if u := bytes.IndexByte(suf, '_'); u >= 0 {
		if !allDigits(suf[u+1:]) {
			return name, nil, sideNone
		}
		base = suf[:u]
	}
	var in bool
	switch string(base) {
	case "input":
		in = true
	case "output":
	default:
		return name, nil, sideNone
	}
	// In the backward pass ".input" is the gradient of the module's input,
	// which the backward computation produces.
	if k == kActvGrad {
		in = !in
	}
	if in {
		return name[:dot], suf, sideIn
	}
	return name[:dot], suf, sideOut
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// isNaNWord reports a cell that spells NaN.
func isNaNWord(b []byte) bool {
	c, ok := nonfinite.Parse(b)
	return ok && c == nonfinite.NaN
}
