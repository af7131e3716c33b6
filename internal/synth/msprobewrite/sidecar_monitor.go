package msprobewrite

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MonitorFile is one of the monitor's CSV files.
type MonitorFile int

// The monitor's files: activations, gradients before and after the
// data-parallel reduction, parameters after the update.
const (
	mActv MonitorFile = iota
	GradUnreduced
	GradReduced
	ParamUpdated
	numMonKinds
)

// monPrefix are TrainerMon's file name prefixes.
var monPrefix = [numMonKinds]string{"actv", "grad_unreduced", "grad_reduced", "param_updated"}

// monitorNDigits is TrainerMon's default ndigits: values are rounded to
// six decimals before they are written.
const monitorNDigits = 1e6

// monitorBudget is the memory shared out over the ranks' row buffers.
const monitorBudget = 16 << 20

// Monitor writes the monitor files of one rank. Rows are buffered per
// file and appended to the file whenever a buffer passes flushAt, and at
// the end of every step (step_count_per_record 1: one file per step), so
// no file stays open and memory stays bounded whatever the world size.
type Monitor struct {
	dir     string
	ops     []string
	header  *[numMonKinds]string
	step    int
	flushAt int
	buf     [numMonKinds][]byte
	made    [numMonKinds]bool // the step's file exists
	err     error
	// files bounds the monitor files open at once, over all ranks
	files chan struct{}
}

// MonitorOpenFiles is how many monitor files may be open at once.
const MonitorOpenFiles = 8

// NewMonitors creates root (if needed) and one TrainerMon folder per rank
// of a run of ranks ranks, <stamp>-rank<r>-<id>, whose id is derived from
// the seed and rank.
func NewMonitors(root string, ranks int, seed int64, ops []string) ([]*Monitor, error) {
	ops, err := CheckMonitorOps(ops)
	if err != nil {
		return nil, err
	}
	header := monitorHeaders(ops)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("synth: create monitor folder: %w", err)
	}
	stamp := epoch.Format("Jan02_15-04-05")
	flushAt := min(max(monitorBudget/(ranks*int(numMonKinds)), 4<<10), 64<<10)
	files := make(chan struct{}, MonitorOpenFiles)
	out := make([]*Monitor, ranks)
	for r := range out {
		id := uint32(mix64(uint64(seed) ^ mix64(uint64(r)+0x6d6f6e)))
		dir := filepath.Join(root, fmt.Sprintf("%s-rank%d-%08x", stamp, r, id))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("synth: create monitor folder: %w", err)
		}
		out[r] = &Monitor{dir: dir, ops: ops, header: &header, flushAt: flushAt, files: files}
	}
	return out, nil
}

// Remove deletes the rank's monitor folder and what it holds.
func (m *Monitor) Remove() { os.RemoveAll(m.dir) }

// Actv writes the rows of one module call: its tensor inputs, then its
// tensor outputs. A tuple of several gets _<i> suffixes (inputs indexed
// by position, outputs among the tensors), as TrainerMon names them.
func (m *Monitor) Actv(path string, step, micro int, in, out []arg) {
	m.setStep(step)
	for i, a := range in {
		if t := writtenTensor(a); t != nil {
			m.actvRow(path, ".input", i, len(in), step, micro, t)
		}
	}
	var outs []*Tensor
	for _, a := range out {
		if t := writtenTensor(a); t != nil {
			outs = append(outs, t)
		}
	}
	for i, t := range outs {
		m.actvRow(path, ".output", i, len(outs), step, micro, t)
	}
}

func (m *Monitor) actvRow(path, side string, i, n, step, micro int, t *Tensor) {
	b := append(m.buf[mActv], "0,"...)
	b = append(b, path...)
	b = append(b, side...)
	if n > 1 {
		b = append(b, '_')
		b = strconv.AppendInt(b, int64(i), 10)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(step), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(micro), 10)
	b = append(b, ',')
	m.buf[mActv] = appendMonitorStats(b, t, m.ops)
	m.maybeFlush(mActv)
}

// writtenTensor is the tensor an argument holds, nil when it holds none.
func writtenTensor(a arg) *Tensor {
	if v, ok := a.(TensorValue); ok {
		return v.Written()
	}
	return nil
}

// Row writes the row of one parameter (or its gradient) to file k.
func (m *Monitor) Row(k MonitorFile, name string, step int, t *Tensor) {
	m.setStep(step)
	b := append(m.buf[k], "0,"...)
	b = append(b, name...)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(step), 10)
	b = append(b, ',')
	m.buf[k] = appendMonitorStats(b, t, m.ops)
	m.maybeFlush(k)
}

func (m *Monitor) setStep(step int) {
	if step != m.step {
		// endStep flushed the previous step's rows
		m.step = step
		m.made = [numMonKinds]bool{}
	}
}

func (m *Monitor) maybeFlush(k MonitorFile) {
	if len(m.buf[k]) >= m.flushAt {
		m.flush(k)
	}
}

// flush appends the buffered rows of one file, creating it with its
// header first.
func (m *Monitor) flush(k MonitorFile) {
	if len(m.buf[k]) == 0 || m.err != nil {
		m.buf[k] = m.buf[k][:0]
		return
	}
	s := strconv.Itoa(m.step)
	path := filepath.Join(m.dir, monPrefix[k]+"_"+s+"-"+s+".csv")
	flag := os.O_WRONLY | os.O_APPEND
	if !m.made[k] {
		flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	m.files <- struct{}{}
	defer func() { <-m.files }()
	f, err := os.OpenFile(path, flag, 0o644)
	if err == nil {
		if !m.made[k] {
			_, err = f.WriteString(m.header[k])
		}
		if err == nil {
			_, err = f.Write(m.buf[k])
		}
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		m.err = fmt.Errorf("synth: write monitor file: %w", err)
	}
	m.made[k] = true
	m.buf[k] = m.buf[k][:0]
}

// EndStep writes what is left of the step's rows.
func (m *Monitor) EndStep() error {
	for k := range numMonKinds {
		m.flush(k)
	}
	m.made = [numMonKinds]bool{}
	return m.err
}

// monitorOps are the statistics the monitor can be configured with.
var monitorOps = []string{"min", "max", "mean", "norm", "nans"}

// monitorHeaders returns the file headers for ops: vpp_stage, name, step,
// micro_step (activation files only), the ops in config order, then shape
// and dtype, which TrainerMon always appends.
func monitorHeaders(ops []string) [numMonKinds]string {
	tail := strings.Join(ops, ",") + ",shape,dtype\n"
	var h [numMonKinds]string
	for k := range numMonKinds {
		if k == mActv {
			h[k] = "vpp_stage,name,step,micro_step," + tail
		} else {
			h[k] = "vpp_stage,name,step," + tail
		}
	}
	return h
}

// CheckMonitorOps returns the ops to write: the default norm and nans, or
// the configured ones, which must be known and distinct.
func CheckMonitorOps(ops []string) ([]string, error) {
	if len(ops) == 0 {
		return []string{"norm", "nans"}, nil
	}
	seen := map[string]bool{}
	for _, op := range ops {
		if !slices.Contains(monitorOps, op) {
			return nil, fmt.Errorf("synth: unknown monitor op %q: want %s", op, strings.Join(monitorOps, ", "))
		}
		if seen[op] {
			return nil, fmt.Errorf("synth: monitor op %q given twice", op)
		}
		seen[op] = true
	}
	return slices.Clone(ops), nil
}

// appendMonitorStats appends "<ops>,shape,dtype\n" for t as TrainerMon
// computes them: min and max in the tensor's dtype, mean and the L2 norm
// in float64 (nan when the tensor holds NaN, inf when it holds ±Inf), the
// count of NaN elements (estimated from the shape and the rows the NaN is
// confined to), the shape as a Python list and the torch dtype. The
// statistics of a device tensor are stacked into one float64 tensor before
// they are written, so every one is written as a float ("0.0" NaNs),
// rounded to six decimals.
func appendMonitorStats(b []byte, t *Tensor, ops []string) []byte {
	for _, op := range ops {
		switch op {
		case "nans":
			nans := 0.0
			if t.DT.IsFloat() && t.NaN && !t.Empty {
				nans = nanCount(t)
			}
			b = appendMonitorFloat(b, nans)
		case "norm":
			b = appendMonitorFloat(b, monitorNorm(t))
		case "min", "max", "mean":
			b = appendMonitorExtreme(b, t, op)
		}
		b = append(b, ',')
	}
	if len(t.Shape) > 1 {
		b = append(b, '"')
	}
	b = append(b, '[')
	for i, d := range t.Shape {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	b = append(b, ']')
	if len(t.Shape) > 1 {
		b = append(b, '"')
	}
	b = append(b, ',')
	b = append(b, t.DT.String()...)
	return append(b, '\n')
}

// appendMonitorExtreme appends the min, max or mean of t.
func appendMonitorExtreme(b []byte, t *Tensor, op string) []byte {
	if t.Empty || t.Numel() <= 0 {
		// torch.min of an empty tensor raises; the monitor writes nan
		return append(b, "nan"...)
	}
	if !t.DT.IsFloat() {
		// integer and bool tensors hold their exact extremes
		switch op {
		case "min":
			return appendMonitorFloat(b, t.Min)
		case "max":
			return appendMonitorFloat(b, t.Max)
		}
		return appendMonitorFloat(b, (t.Min+t.Max)/2)
	}
	mx, mn, mean, _ := t.Stats()
	switch op {
	case "min":
		return appendMonitorFloat(b, mn)
	case "max":
		return appendMonitorFloat(b, mx)
	}
	if !math.IsNaN(mean) && !math.IsInf(mean, 0) {
		mean = t.Mean // computed in float64, not rounded to the dtype
	}
	return appendMonitorFloat(b, mean)
}

// appendMonitorFloat appends x as pandas writes a value rounded to six
// decimals: Python's repr, nan, inf, -inf.
func appendMonitorFloat(b []byte, x float64) []byte {
	if nf := pyNonFinite(x, false); nf != "" {
		return append(b, nf...)
	}
	if r := x * monitorNDigits; math.Abs(r) < 1<<53 {
		x = math.RoundToEven(r) / monitorNDigits
	}
	return appendPyFloat(b, x)
}

// monitorNorm is torch.norm(t.to(float64)).
func monitorNorm(t *Tensor) float64 {
	n := t.Numel()
	switch {
	case t.Empty || n <= 0:
		return 0
	case t.DT == DTBool:
		switch {
		case t.Min >= 1:
			return math.Sqrt(n)
		case t.Max <= 0:
			return 0
		}
		return math.Sqrt(n / 2)
	case t.DT == DTInt64:
		return math.Sqrt(n * (t.Max*t.Max + t.Max*t.Min + t.Min*t.Min) / 3)
	case t.NaN:
		return math.NaN()
	case t.PInf || t.NInf:
		return math.Inf(1)
	}
	return t.Norm
}

// nanCount estimates the NaN elements of t: the rows they are confined to,
// else every element.
func nanCount(t *Tensor) float64 {
	n := t.Numel()
	if t.Rows != 0 && len(t.Shape) > 0 && t.Shape[0] > 0 {
		rows := min(bits.OnesCount64(t.Rows), t.Shape[0])
		n = float64(rows) * n / float64(t.Shape[0])
	}
	return math.Max(1, math.Floor(n))
}
