package trainlog

import (
	"strconv"

	"github.com/nanhunt/nanhunt/internal/climb"
)

// Log is what [Read] found in a set of training logs.
type Log struct {
	// Files lists every path given to Read, in order, including the ones
	// that could not be read (Format "").
	Files []File
	// Records are the records kept (see the package documentation,
	// "Memory"), file by file in line order.
	Records []Record
	// Mapping is the step mapping shared by the files that hold records.
	// When files differ (a Megatron log next to a JSON one without
	// Options.StepOffset) it is the first such file's, and a warning says
	// so; each File has its own.
	Mapping Mapping
	// Warnings are the problems met on the way, in order.
	Warnings []Warning

	summary Summary
	climbs  []climb.Series
}

// Summary returns what the logs say about the first non-finite values; it
// is computed by Read from every record, kept or not.
func (l *Log) Summary() Summary { return l.summary }

// File describes one input file.
type File struct {
	// Path is the path as given.
	Path string `json:"path"`
	// Rank is the file's rank: from its content (a top-level "rank" key, or
	// the one rank all its lines name), else from its name (rank3,
	// rank_3, rank-3, worker3, a rank3/ folder, torchrun's .../3/stdout.log),
	// else -1.
	Rank int `json:"rank"`
	// Ranks lists the ranks named by the lines of a file holding several.
	Ranks []int `json:"ranks,omitempty"`
	// Format is "megatron", "deepspeed", "json", "generic", or "" when
	// nothing was recognised or the file could not be read.
	Format string `json:"format"`
	// Mapping is the step mapping used for this file.
	Mapping Mapping `json:"mapping"`
	// Lines is the number of lines read (for JSON, of the document).
	Lines int `json:"lines"`
	// Records is the number of records found, kept or not.
	Records int `json:"records"`
	// Dropped is the number of records not kept in Log.Records.
	Dropped int `json:"dropped,omitempty"`
}

// Record is one iteration of one rank as one line (or JSON object) printed
// it.
type Record struct {
	// File and Line say where the record was printed (Line counts from 1;
	// for a record completed by later lines, its first line; for a JSON
	// record, the line of its opening brace).
	File string
	Line int
	// Rank is the rank that printed it, -1 if unknown.
	Rank int
	// Iteration is the iteration as printed; Step is the msprobe step,
	// Iteration + Mapping.Offset.
	Iteration int
	Step      int
	// Loss and GradNorm are the printed values; either may be Absent.
	Loss     Value
	GradNorm Value
	// LossScale is the loss scale the record prints (Megatron-LM's "loss
	// scale", a JSON "loss_scale"), or the one a DeepSpeed overflow line
	// reduces to; Absent when it prints none.
	LossScale Value
	// Skipped reports an iteration skipped by the loss scaler; Note says
	// why ("loss scale 65536 → 32768").
	Skipped bool
	Note    string
	// LossLeftOut reports a Megatron-LM line without a loss although earlier
	// lines of the same rank printed one: training_log leaves out a loss
	// average that is not above 0, and NaN is not.
	LossLeftOut bool
	// Inferred reports that the iteration was not printed on the line but
	// counted: an overflow line placed after the last step counter, an
	// HF-Trainer dict line, or a value line with no step pattern.
	Inferred bool
	// NonFinite lists the names in a JSON record's list-of-strings fields
	// whose key contains "nonfinite" or "nan" (such as nonfinite_params):
	// the parameters that were non-finite after this step.
	NonFinite []string
}

// finiteOnly reports a record that is plainly finite: not skipped, no
// non-finite value or name, loss not left out, and at least one finite
// value.
func (r *Record) finiteOnly() bool {
	return !r.Skipped && !r.LossLeftOut && len(r.NonFinite) == 0 &&
		!r.Loss.NonFinite() && !r.GradNorm.NonFinite() &&
		(r.Loss.Kind == Finite || r.GradNorm.Kind == Finite)
}

// Warning is a problem with one file that did not stop the read.
type Warning struct {
	// File is the path; Line the line (from 1), or 0 when the problem is
	// not about one line.
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// String returns "file:line: message", or "file: message" without a line.
func (w Warning) String() string {
	if w.Line > 0 {
		return w.File + ":" + strconv.Itoa(w.Line) + ": " + w.Message
	}
	return w.File + ": " + w.Message
}
