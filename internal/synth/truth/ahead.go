package truth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/synth/spec"
)

// Ahead is a warning due before the first non-finite value: the statistic
// of the origin that climbed towards the limit of its dtype in the dumped
// steps before the first non-finite one.
type Ahead struct {
	// Op is the origin's entry name; Tensor its slot ("input_args.0",
	// "output.0"); Stat "max" or "min"; Dtype the slot's dtype.
	Op     string `json:"op"`
	Tensor string `json:"tensor"`
	Stat   string `json:"stat"`
	Dtype  string `json:"dtype"`
	// Ranks are the origin's ranks; Series is read on the first.
	Ranks []int `json:"ranks"`
	// Limit is the value the statistic overflows at: the dtype's largest
	// finite value (negative for min), or for the input of an exp, ln of
	// the largest value of the dtype its result is stored in.
	Limit float64 `json:"limit"`
	// FirstNonFinite is the origin's step; WarnBy the latest step at which
	// the warning is due (two steps before).
	FirstNonFinite int `json:"first_nonfinite_step"`
	WarnBy         int `json:"warn_by_step"`
	// Series is the statistic at every dumped step before FirstNonFinite.
	Series []Point `json:"series"`
}

// Point is one value of a series.
type Point struct {
	Step  int     `json:"step"`
	Value float64 `json:"value"`
}

// What makes a warning due: over the last aheadSteps dumped steps before
// the first non-finite one the statistic rises by aheadRise a step, and
// two steps before it, it is within aheadFactor of its limit (an exp's
// input: at least half of its limit).
const (
	aheadSteps  = 4
	aheadRise   = 1.05
	aheadFactor = 64
)

// ReadAhead returns the warnings due in a written run whose fault is a
// climb (spec.Fault.Climbs), read from the dump.json files under dir
// (rankDir names a rank's folder): the statistic of the origin entry
// that is non-finite at the origin step, on its first rank, at every
// dumped step before. It returns an empty list when the run has no
// anomaly, its fault is no climb, or the series does not qualify.
func ReadAhead(dir string, s *spec.Spec, t *Truth, rankDir func(int) string) ([]Ahead, error) {
	none := []Ahead{}
	if !t.Anomaly || !t.Captured || len(t.Ranks) == 0 || s.Fault == nil || !s.Fault.Climbs() {
		return none, nil
	}
	rank := t.Ranks[0]
	read := func(step int) (map[string]any, error) {
		return readEntry(filepath.Join(dir, "step"+strconv.Itoa(step), rankDir(rank), "dump.json"), t.Op)
	}
	e, err := read(t.Step)
	if err != nil || e == nil {
		return none, err
	}
	a, ok := climbingSlot(t.Op, e)
	if !ok {
		return none, nil
	}
	a.Op, a.Ranks, a.FirstNonFinite, a.WarnBy = t.Op, slices.Clone(t.Ranks), t.Step, t.Step-2
	a.Series = []Point{}
	for _, step := range s.Steps {
		if step >= t.Step {
			break
		}
		e, err := read(step)
		if err != nil {
			return none, err
		}
		if v, ok := statOf(e, a.Tensor, a.Stat); ok && !math.IsInf(v, 0) && !math.IsNaN(v) {
			a.Series = append(a.Series, Point{Step: step, Value: v})
		}
	}
	if !a.due() {
		return none, nil
	}
	return []Ahead{a}, nil
}

// climbingSlot finds the slot of the origin entry name that holds the
// climb: the input of an exp, else the first output slot whose Max (or
// Min) is non-finite.
func climbingSlot(name string, e map[string]any) (Ahead, bool) {
	outs := tensorsOf(e["output"])
	if len(outs) == 0 {
		return Ahead{}, false
	}
	if in := tensorsOf(e["input_args"]); len(in) > 0 && strings.Contains(name, ".exp.") {
		dt, _ := outs[0]["dtype"].(string)
		return Ahead{Tensor: "input_args.0", Stat: "max", Dtype: str(in[0]["dtype"]), Limit: math.Log(dtypeMax(dt))}, true
	}
	for i, o := range outs {
		for _, st := range []string{"max", "min"} {
			v, ok := statOf(map[string]any{"output": []any{o}}, "output.0", st)
			if !ok || !math.IsInf(v, 0) {
				continue
			}
			lim := dtypeMax(str(o["dtype"]))
			if st == "min" {
				lim = -lim
			}
			return Ahead{Tensor: "output." + strconv.Itoa(i), Stat: st, Dtype: str(o["dtype"]), Limit: lim}, true
		}
	}
	return Ahead{}, false
}

// due checks the rise over the last dumped steps and the distance to the
// limit two steps before the first non-finite value.
func (a *Ahead) due() bool {
	n := len(a.Series)
	if n < aheadSteps {
		return false
	}
	last := a.Series[n-aheadSteps:]
	if last[0].Step != a.FirstNonFinite-aheadSteps || last[aheadSteps-1].Step != a.FirstNonFinite-1 {
		return false
	}
	for i := 1; i < len(last); i++ {
		if math.Abs(last[i].Value) < aheadRise*math.Abs(last[i-1].Value) {
			return false
		}
	}
	at := math.Abs(last[aheadSteps-2].Value)
	if a.Stat == "max" && strings.HasPrefix(a.Tensor, "input_args") {
		return at >= a.Limit/2
	}
	return at*aheadFactor >= math.Abs(a.Limit)
}

// dtypeMax is the largest finite value of a floating dtype.
func dtypeMax(dt string) float64 {
	switch dt {
	case "torch.float16":
		return 65504
	case "torch.bfloat16":
		return 3.3895313892515355e+38
	}
	return math.MaxFloat32
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// tensorsOf lists the tensors of a field: a list of values or one value.
func tensorsOf(v any) []map[string]any {
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case map[string]any:
		items = []any{x}
	}
	var out []map[string]any
	for _, it := range items {
		m, _ := it.(map[string]any)
		out = append(out, m)
	}
	return out
}

// statOf reads a statistic ("max", "min") of a slot ("output.0") of an
// entry, whatever the spelling of its key and value.
func statOf(e map[string]any, slot, stat string) (float64, bool) {
	field, idx, ok := strings.Cut(slot, ".")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(idx)
	ts := tensorsOf(e[field])
	if err != nil || i < 0 || i >= len(ts) || ts[i] == nil {
		return 0, false
	}
	for k, v := range ts[i] {
		if !strings.EqualFold(k, stat) {
			continue
		}
		switch x := v.(type) {
		case float64:
			return x, true
		case string:
			f, err := strconv.ParseFloat(x, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// readEntry returns the entry name of a dump.json file (nil when the file
// or the entry is missing, or the file is cut).
func readEntry(path, name string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("synth: read %s: %w", path, err)
	}
	var doc struct {
		Data map[string]map[string]any `json:"data"`
	}
	if err := json.Unmarshal(quoteNonFinite(b), &doc); err != nil {
		return nil, nil
	}
	return doc.Data[name], nil
}

// quoteNonFinite turns the bare NaN, Infinity and -Infinity tokens Python
// writes into strings, so that encoding/json reads the file.
func quoteNonFinite(b []byte) []byte {
	out := make([]byte, 0, len(b)+64)
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case in:
			out = append(out, c)
			if c == '\\' && i+1 < len(b) {
				i++
				out = append(out, b[i])
			} else if c == '"' {
				in = false
			}
		case c == '"':
			in = true
			out = append(out, c)
		default:
			tok := ""
			for _, t := range []string{"NaN", "Infinity", "-Infinity"} {
				if bytes.HasPrefix(b[i:], []byte(t)) {
					tok = t
					break
				}
			}
			if tok == "" {
				out = append(out, c)
				continue
			}
			out = append(append(append(out, '"'), tok...), '"')
			i += len(tok) - 1
		}
	}
	return out
}
