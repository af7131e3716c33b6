package reference

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// Ahead is a statistic heading for overflow (README "Heading for
// overflow"): one call, tensor slot and statistic, the ranks whose series
// qualifies, the step it was judged at and the steps left at its pace (on
// the rank with the fewest).
type Ahead struct {
	Op, Tensor, Stat string
	Ranks            []int
	Step             int
	StepsLeft        float64
}

// The rule's numbers, as the README gives them.
const (
	aheadNear, aheadExpNear   = 64.0, 0.5
	aheadRise, aheadExpRise   = 1.05, 0.01
	aheadHorizon              = 5.0
	aheadClose, aheadExpClose = 4.0, 0.75
	aheadPoints, aheadShown   = 3, 5
)

// dtypeLargest is the largest finite value of each floating dtype.
var dtypeLargest = map[string]float64{
	"torch.float16": 65504, "torch.half": 65504,
	"torch.bfloat16": 3.3895313892515355e38,
	"torch.float32":  math.MaxFloat32, "torch.float": math.MaxFloat32,
	"torch.float64": math.MaxFloat64, "torch.double": math.MaxFloat64,
}

// expCall names a forward call of the exp family, in the dotted form.
var expCall = regexp.MustCompile(`\.(?:special_)?(exp|exp_|expm1|exp2|sinh|cosh)\.[0-9]+\.forward$`)

// largeLiteral is the form a watched value takes at the step judged: a
// whole number of four digits or more before ".0", or an exponent of +36
// or more (README: how the search finds them).
var largeLiteral = regexp.MustCompile(`^-?([0-9]{4,}\.0|[0-9.]*[0-9][eE]\+0*([4-9][0-9]|3[6-9]|[1-9][0-9]{2,}))$`)

// aheadValue is one statistic at one step.
type aheadValue struct {
	op, tensor, stat string
	value, limit     float64
	linear, watched  bool
}

// aheadValues reads every statistic of a decoded dump.json's entries that
// can head for a limit.
func aheadValues(entries []jsonoracle.Member) []aheadValue {
	var out []aheadValue
	for _, m := range entries {
		if m.Value == nil || m.Value.Kind != jsonoracle.Object {
			continue
		}
		fields := m.Value.Members
		if isParamsGrad(m.Name) {
			fields = []jsonoracle.Member{{Name: "parameters_grad", Value: m.Value}}
		}
		var tensors []aheadTensor
		np := parseName(m.Name)
		args := argsOf(m.Value)
		for _, f := range fields {
			switch f.Name {
			case "input_args", "input_kwargs", "input", "output", "parameters", "parameters_grad":
				for _, t := range collectTensors(f.Name, f.Value, nil) {
					if aheadCounts(np, args, t.path) {
						tensors = append(tensors, t)
					}
				}
			}
		}
		out = append(out, expValues(m.Name, tensors)...)
		for _, t := range tensors {
			largest, ok := dtypeLargest[t.dtype]
			if !ok {
				continue
			}
			for _, s := range []struct {
				name string
				node *jsonoracle.Node
			}{{"max", t.max}, {"min", t.min}} {
				x, ok := readNumber(s.node)
				if !ok || math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= largest {
					continue
				}
				watched := math.Abs(x) >= largest/aheadNear && largeLiteral.MatchString(s.node.Literal)
				out = append(out, aheadValue{op: m.Name, tensor: t.path, stat: s.name, value: x, limit: largest, watched: watched})
			}
		}
	}
	return out
}

// expValues is the input Max of a call of the exp family, watched against
// the log of its result's largest value.
func expValues(name string, tensors []aheadTensor) []aheadValue {
	mm := expCall.FindStringSubmatch(name)
	if mm == nil || len(tensors) == 0 {
		return nil
	}
	result := ""
	for _, t := range tensors {
		if strings.HasPrefix(t.path, "output.") {
			result = t.dtype
			break
		}
	}
	var in *aheadTensor
	for i := range tensors {
		if strings.HasPrefix(tensors[i].path, "input_args.0") && in == nil {
			in = &tensors[i]
		}
	}
	if result == "" && in != nil {
		result = in.dtype
	}
	largest, ok := dtypeLargest[result]
	if !ok || in == nil {
		return nil
	}
	limit := math.Log(largest)
	switch mm[1] {
	case "exp2":
		limit = math.Log2(largest)
	case "sinh", "cosh":
		limit = math.Log(2 * largest)
	}
	x, ok := readNumber(in.max)
	if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return []aheadValue{{op: name, tensor: in.path, stat: "max", value: x, limit: limit, linear: true, watched: x >= limit*aheadExpNear && x < limit}}
}

// aheadTensor is a tensor leaf of an entry: its path, dtype and Max, Min.
type aheadTensor struct {
	path, dtype string
	max, min    *jsonoracle.Node
}

// collectTensors walks a field to its tensors (objects with a dtype).
func collectTensors(path string, n *jsonoracle.Node, out []aheadTensor) []aheadTensor {
	if n == nil {
		return out
	}
	switch n.Kind {
	case jsonoracle.Array:
		for i, e := range n.Elems {
			out = collectTensors(path+"."+strconv.Itoa(i), e, out)
		}
	case jsonoracle.Object:
		if d := member(n, "dtype"); d != nil && d.Kind == jsonoracle.String {
			return append(out, aheadTensor{path: path, dtype: d.Literal, max: statNode(n, "max"), min: statNode(n, "min")})
		}
		for _, m := range n.Members {
			out = collectTensors(path+"."+m.Name, m.Value, out)
		}
	}
	return out
}

// statNode is a statistic's member in any case ("Max", "max").
func statNode(n *jsonoracle.Node, name string) *jsonoracle.Node {
	var found *jsonoracle.Node
	for _, m := range n.Members {
		if strings.EqualFold(m.Name, name) {
			found = m.Value // the last, as a reader keeps it
		}
	}
	return found
}

// aheadJudge is the README's rule on a series, oldest first.
func aheadJudge(steps []int, vals []float64, limit float64, linear bool) (float64, bool) {
	n := len(vals)
	if n < aheadPoints {
		return 0, false
	}
	s, v := steps[n-aheadPoints:], vals[n-aheadPoints:]
	if !linear {
		for i := range v {
			v[i] = math.Abs(v[i])
		}
	}
	for i := 1; i < len(v); i++ {
		gap := float64(s[i] - s[i-1])
		if linear && v[i]-v[i-1] < aheadExpRise*limit*gap {
			return 0, false
		}
		if !linear && (v[i-1] <= 0 || v[i] < v[i-1]*math.Pow(aheadRise, gap)) {
			return 0, false
		}
	}
	first, last := v[0], v[len(v)-1]
	span := float64(s[len(s)-1] - s[0])
	if linear {
		if last < limit*aheadExpNear || last >= limit {
			return 0, false
		}
		left := (limit - last) / ((last - first) / span)
		return left, left <= aheadHorizon || last >= limit*aheadExpClose
	}
	if last < limit/aheadNear || last >= limit {
		return 0, false
	}
	left := math.Log(limit/last) / math.Log(math.Pow(last/first, 1/span))
	return left, left <= aheadHorizon || last >= limit/aheadClose
}

// aheadOf judges the series of every rank at step (files: rank -> step ->
// dump.json path, of the steps up to it) and merges them as the README
// says: one per call, tensor and statistic, one statistic per tensor.
func aheadOf(step int, files map[int]map[int]string) []Ahead {
	type key struct{ op, tensor, stat string }
	best := map[key]*Ahead{}
	for rank, byStep := range files {
		path, ok := byStep[step]
		if !ok {
			continue
		}
		var steps []int
		for s := range byStep {
			steps = append(steps, s)
		}
		sort.Sort(sort.Reverse(sort.IntSlice(steps)))
		f := readDump(path)
		if f.status != fileRead {
			continue
		}
		earlier := map[int]map[key]float64{}
		loaded := 0
		for _, s := range steps[1:] {
			if loaded == aheadShown-1 {
				break
			}
			g := readDump(byStep[s])
			if g.status != fileRead {
				break
			}
			m := map[key]float64{}
			for _, v := range aheadValues(g.entries) {
				m[key{v.op, v.tensor, v.stat}] = v.value
			}
			earlier[s] = m
			loaded++
		}
		for _, v := range aheadValues(f.entries) {
			if !v.watched {
				continue
			}
			k := key{v.op, v.tensor, v.stat}
			ss, vs := []int{step}, []float64{v.value}
			for _, s := range steps[1:] {
				x, ok := earlier[s][k]
				if !ok {
					break
				}
				ss, vs = append([]int{s}, ss...), append([]float64{x}, vs...)
			}
			left, ok := aheadJudge(ss, vs, v.limit, v.linear)
			if !ok {
				continue
			}
			a := best[k]
			if a == nil {
				a = &Ahead{Op: v.op, Tensor: v.tensor, Stat: v.stat, Step: step, StepsLeft: left}
				best[k] = a
			}
			a.Ranks = append(a.Ranks, rank)
			a.StepsLeft = math.Min(a.StepsLeft, left)
		}
	}
	perTensor := map[[2]string]*Ahead{}
	for _, a := range best {
		sort.Ints(a.Ranks)
		t := [2]string{a.Op, a.Tensor}
		if o := perTensor[t]; o == nil || a.StepsLeft < o.StepsLeft || (a.StepsLeft == o.StepsLeft && a.Stat < o.Stat) {
			perTensor[t] = a
		}
	}
	out := []Ahead{}
	for _, a := range perTensor {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.StepsLeft != b.StepsLeft {
			return a.StepsLeft < b.StepsLeft
		}
		return a.Op+"\x00"+a.Tensor+"\x00"+a.Stat < b.Op+"\x00"+b.Tensor+"\x00"+b.Stat
	})
	return out
}

// aheadCounts reports whether a tensor at path (field.slot…) carries a
// value the rules judge as the call's own (README 12, from §2 and §3):
// not the outputs of a creation op, the first input of an op that
// overwrites it or an out= buffer; for a collective, only a send slot on
// the input side (none when only its root sends) and a receive slot on
// the output side; nothing of a batch of point-to-point calls or a call
// without tensors.
func aheadCounts(np nameParts, args argList, path string) bool {
	parts := strings.Split(path, ".")
	field, pos, kw := parts[0], -1, ""
	if len(parts) > 1 {
		if n, err := strconv.Atoi(parts[1]); err == nil && field != "input_kwargs" && field != "parameters" && field != "parameters_grad" {
			pos = n
		} else {
			kw = parts[1]
		}
	}
	switch {
	case field == "output" && matchesAny(emptyOps, np.op):
		return false
	case pos == 0 && (field == "input_args" || field == "input") && matchesAny(destinationOps, np.op):
		return false
	case field == "input_kwargs" && kw == "out":
		return false
	case !np.collective:
		return true
	}
	spec, known := specOf(np.api)
	switch {
	case !known:
		return field == "input_args" || field == "input_kwargs" || field == "output"
	case spec.inert || spec.batch:
		return false
	case field == "input_args" || field == "input_kwargs":
		return spec.hasSend && !spec.sendRootOnly && spec.send.matches(pos, kw)
	case field == "output":
		p, k := args.outputSlot(pos)
		return spec.hasRecv && spec.recv.matches(p, k)
	}
	return false
}
