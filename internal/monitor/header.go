package monitor

import (
	"fmt"
	"strings"
)

// Header styles, as reported in Findings.HeaderStyles.
const (
	// StyleV1 is TrainerMon's current header (msprobe 8.x from 2025-02 and
	// the 26.x line): vpp_stage,name,step[,micro_step],<ops>,shape,dtype.
	StyleV1 = "v1"
	// StyleV1Old is TrainerMon's header before 2025-02:
	// [vpp_stage,]module_name,step,input.<op>…,output.<op>… for activations
	// and [vpp_stage,]param_name,step,<ops> for the other files.
	StyleV1Old = "v1-old"
	// StyleV2 is monitor_v2's header:
	// vpp_stage,step,module_name,scope[,micro_step],min,max,mean,norm,nans.
	StyleV2 = "v2"
)

// Statistic columns the analysis reads, in this order in sideCols.stat.
const (
	sMin = iota
	sMax
	sMean
	sNorm
	sNans
	numStats
)

var statNames = [numStats]string{"min", "max", "mean", "norm", "nans"}

// knownOps are the monitor's other statistics: read past without a warning.
var knownOps = map[string]bool{"zeros": true, "id": true}

// side tells whether a tensor went into or came out of the computation the
// row describes: in the forward pass a module's input is "in" and its
// output "out"; in the backward pass the gradient of the output is "in" and
// the gradient of the input is "out".
type side int8

const (
	sideNone side = iota // parameters, optimizer state, unknown tensors
	sideIn
	sideOut
)

func (s side) String() string {
	switch s {
	case sideIn:
		return "in"
	case sideOut:
		return "out"
	}
	return ""
}

// sideCols are the statistic columns of one tensor of a row: the only one
// in the current formats, or the input or output half of an old-style
// activation row.
type sideCols struct {
	tensor  string // old style: "input", "output", "input_grad", "output_grad"
	tensorB []byte
	side    side
	stat    [numStats]int // column index, -1 when absent
}

// layout is a parsed header: where each column is.
type layout struct {
	style                                       string
	ncol                                        int
	vpp, name, step, micro, scope, shape, dtype int
	sides                                       []sideCols
	unknown                                     []string
}

func newSideCols(tensor string, sd side) sideCols {
	c := sideCols{tensor: tensor, tensorB: []byte(tensor), side: sd}
	for i := range c.stat {
		c.stat[i] = -1
	}
	return c
}

// oldPrefix maps the column prefixes of old-style activation headers to
// the tensor and its side.
var oldPrefix = map[string]side{
	"input":       sideIn,
	"output":      sideOut,
	"input_grad":  sideOut,
	"output_grad": sideIn,
}

// parseHeader reads a header line.
func parseHeader(fields [][]byte) (*layout, error) {
	l := &layout{ncol: len(fields), vpp: -1, name: -1, step: -1, micro: -1, scope: -1, shape: -1, dtype: -1}
	plain := newSideCols("", sideNone)
	var prefixed []sideCols
	oldName := false
	set := func(p *int, i int, col string) error {
		if *p >= 0 {
			return fmt.Errorf("column %q appears twice", col)
		}
		*p = i
		return nil
	}
	for i, f := range fields {
		col := strings.TrimSpace(string(f))
		var err error
		switch col {
		case "vpp_stage":
			err = set(&l.vpp, i, col)
		case "name":
			err = set(&l.name, i, col)
		case "module_name", "param_name":
			oldName = true
			err = set(&l.name, i, col)
		case "step":
			err = set(&l.step, i, col)
		case "micro_step":
			err = set(&l.micro, i, col)
		case "scope":
			err = set(&l.scope, i, col)
		case "shape":
			err = set(&l.shape, i, col)
		case "dtype":
			err = set(&l.dtype, i, col)
		default:
			if k := statIndex(col); k >= 0 {
				err = set(&plain.stat[k], i, col)
				break
			}
			if knownOps[col] {
				break
			}
			if dot := strings.LastIndexByte(col, '.'); dot > 0 {
				if sd, ok := oldPrefix[col[:dot]]; ok {
					op := col[dot+1:]
					if k := statIndex(op); k >= 0 || knownOps[op] {
						j := -1
						for n := range prefixed {
							if prefixed[n].tensor == col[:dot] {
								j = n
							}
						}
						if j < 0 {
							prefixed = append(prefixed, newSideCols(col[:dot], sd))
							j = len(prefixed) - 1
						}
						if k >= 0 {
							err = set(&prefixed[j].stat[k], i, col)
						}
						break
					}
				}
			}
			l.unknown = append(l.unknown, col)
		}
		if err != nil {
			return nil, err
		}
	}
	if l.name < 0 || l.step < 0 {
		return nil, fmt.Errorf("no name and step columns")
	}
	switch {
	case l.scope >= 0:
		l.style = StyleV2
	case oldName || len(prefixed) > 0:
		l.style = StyleV1Old
	default:
		l.style = StyleV1
	}
	if len(prefixed) > 0 {
		// Inputs before outputs: the order the computation sees them.
		if prefixed[0].side == sideOut && len(prefixed) > 1 {
			prefixed[0], prefixed[1] = prefixed[1], prefixed[0]
		}
		l.sides = prefixed
	}
	if hasStat(plain) || len(prefixed) == 0 {
		l.sides = append([]sideCols{plain}, l.sides...)
	}
	return l, nil
}

func statIndex(op string) int {
	for k, n := range statNames {
		if n == op {
			return k
		}
	}
	return -1
}

func hasStat(c sideCols) bool {
	for _, i := range c.stat {
		if i >= 0 {
			return true
		}
	}
	return false
}

// isHeaderRepeat reports whether a data record is a copy of the header
// (its step cell reads "step").
func (l *layout) isHeaderRepeat(fields [][]byte) bool {
	return l.step < len(fields) && string(fields[l.step]) == "step"
}
