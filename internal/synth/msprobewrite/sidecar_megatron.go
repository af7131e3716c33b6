package msprobewrite

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nanhunt/nanhunt/internal/synth/spec"
)

// TrainLog writes train.log, the iteration lines Megatron-LM's
// training_log prints on the last rank (log_interval 1).
type TrainLog struct {
	path    string // the file, which NewTrainLog created
	f       *os.File
	b       *bufio.Writer
	last    []bool // ranks on the last pipeline stage
	iters   int    // train_iters: every simulated step
	batch   int    // global batch size
	lr      float64
	clock   time.Time
	nanLoss bool // Sidecars.LogNaNLoss
}

// NewTrainLog creates dir/train.log (which must not exist) and writes the
// lines training prints before its first iteration. last tells the ranks
// on the last pipeline stage, lr is the learning rate, nanLoss is
// Sidecars.LogNaNLoss.
func NewTrainLog(dir string, s *spec.Spec, last []bool, lr float64, nanLoss bool) (*TrainLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("synth: create log folder: %w", err)
	}
	path := filepath.Join(dir, "train.log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("synth: create training log: %w", err)
	}
	l := &TrainLog{path: path, f: f, b: bufio.NewWriterSize(f, 64<<10), clock: epoch,
		iters: s.Steps[len(s.Steps)-1] + 1, lr: lr, last: last, nanLoss: nanLoss}
	dp := s.Ranks / (s.TP * s.PP)
	l.batch = s.Batch * s.MicroBatches * dp
	fmt.Fprintf(l.b, "[after dataloaders are built] datetime: %s \n", l.clock.Format(time.DateTime))
	// building the model and the optimizer takes a few seconds
	l.clock = l.clock.Add(6 * time.Second)
	fmt.Fprintf(l.b, "done with setup ...\n")
	fmt.Fprintf(l.b, "training ...\n")
	fmt.Fprintf(l.b, "[before the start of training step] datetime: %s \n", l.clock.Format(time.DateTime))
	return l, nil
}

// Iteration writes the line of one simulated step that took ms
// milliseconds from the ranks' tallies: the loss averaged over the
// micro-batches and the ranks that compute it, and the global norm of the
// reduced gradients.
func (l *TrainLog) Iteration(step int, ms float64, ranks []StepTally) error {
	loss, n := 0.0, 0
	sq, gNaN, gInf := 0.0, false, false
	skipped, scale := false, 1.0
	for r, t := range ranks {
		if l.last[r] {
			skipped = skipped || t.Skipped
			if t.Scale > 0 {
				scale = t.Scale
			}
		}
		if l.last[r] && t.Losses > 0 {
			loss += t.LossSum / float64(t.Losses)
			n++
		}
		sq += t.GradSq
		gNaN = gNaN || t.GradNaN
		gInf = gInf || t.GradInf
	}
	if n > 0 {
		loss /= float64(n)
	} else {
		loss = math.NaN()
	}
	grad := math.Sqrt(sq)
	switch {
	case gNaN:
		grad = math.NaN()
	case gInf:
		grad = math.Inf(1)
	}
	l.clock = l.clock.Add(time.Duration(ms * float64(time.Millisecond)))
	it := step + 1
	bad := math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(grad) || math.IsInf(grad, 0)

	b := make([]byte, 0, 400)
	b = append(b, " ["...)
	b = l.clock.AppendFormat(b, time.DateTime)
	b = append(b, "] iteration "...)
	b = padInt(b, it, 8)
	b = append(b, '/')
	b = padInt(b, l.iters, 8)
	b = append(b, " | consumed samples: "...)
	b = padInt(b, it*l.batch, 12)
	b = append(b, " | elapsed time per iteration (ms): "...)
	b = strconv.AppendFloat(b, ms, 'f', 1, 64)
	b = append(b, " | learning rate: "...)
	b = appendPyE(b, l.lr)
	b = append(b, " | global batch size: "...)
	b = padInt(b, l.batch, 5)
	b = append(b, " |"...)
	// training_log prints an average only when it is above zero
	if loss > 0 || (l.nanLoss && math.IsNaN(loss)) {
		b = append(b, " lm loss: "...)
		b = appendPyE(b, loss)
		b = append(b, " |"...)
	}
	b = append(b, " loss scale: "...)
	b = strconv.AppendFloat(b, scale, 'f', 1, 64)
	if !skipped {
		// a skipped iteration has no grad norm
		b = append(b, " | grad norm: "...)
		b = appendPyFixed3(b, grad)
	}
	b = append(b, " | number of skipped iterations: "...)
	nSkipped := 0
	if skipped {
		nSkipped = 1
	}
	b = padInt(b, nSkipped, 3)
	b = append(b, " | number of nan iterations: "...)
	nanIters := 0
	if (l.nanLoss || skipped) && bad {
		nanIters = 1
	}
	b = padInt(b, nanIters, 3)
	b = append(b, " |\n"...)
	_, err := l.b.Write(b)
	if err != nil {
		return fmt.Errorf("synth: write training log: %w", err)
	}
	return nil
}

// Remove closes the log and deletes it.
func (l *TrainLog) Remove() {
	l.Close()
	os.Remove(l.path)
}

// close writes the closing line and closes the file; later calls do
// nothing.
func (l *TrainLog) Close() error {
	if l.f == nil {
		return nil
	}
	fmt.Fprintf(l.b, "[after training is done] datetime: %s \n", l.clock.Format(time.DateTime))
	err := l.b.Flush()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("synth: write training log: %w", err)
	}
	return nil
}

// padInt appends n right-aligned in width columns, as Python's {:Nd}.
func padInt(b []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		b = append(b, ' ')
	}
	return append(b, s...)
}

// appendPyE appends x as Python's {:.6E} spells it: 2.304512E+00, NAN,
// INF, -INF.
func appendPyE(b []byte, x float64) []byte {
	if nf := pyNonFinite(x, true); nf != "" {
		return append(b, nf...)
	}
	return strconv.AppendFloat(b, x, 'E', 6, 64)
}

// appendPyFixed3 appends x as Python's {:.3f} spells it: 1.234, nan, inf,
// -inf.
func appendPyFixed3(b []byte, x float64) []byte {
	if nf := pyNonFinite(x, false); nf != "" {
		return append(b, nf...)
	}
	return strconv.AppendFloat(b, x, 'f', 3, 64)
}

// pyNonFinite is how Python formats a non-finite x (upper case for the E
// and F formats), or "" when x is finite.
func pyNonFinite(x float64, upper bool) string {
	s := ""
	switch {
	case math.IsNaN(x):
		s = "nan"
	case math.IsInf(x, 1):
		s = "inf"
	case math.IsInf(x, -1):
		s = "-inf"
	}
	if upper {
		return strings.ToUpper(s)
	}
	return s
}
