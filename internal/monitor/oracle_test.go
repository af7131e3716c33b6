package monitor

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// The slow reference: encoding/csv for records, strconv.ParseFloat for
// values, and a naive analysis over every row held in memory.

// csvSource adapts encoding/csv to recordSource.
type csvSource struct {
	r     *csv.Reader
	size  int
	nlEnd bool
	ln    int
	rec   [][]byte
}

func newCSVSource(data []byte) *csvSource {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	return &csvSource{r: r, size: len(data), nlEnd: bytes.HasSuffix(data, []byte("\n"))}
}

func (c *csvSource) next() ([][]byte, error) {
	rec, err := c.r.Read()
	if err == io.EOF {
		return nil, io.EOF
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return nil, &syntaxError{line: pe.StartLine, msg: pe.Err.Error()}
	}
	if err != nil {
		return nil, err
	}
	c.ln, _ = c.r.FieldPos(0)
	c.rec = c.rec[:0]
	for _, f := range rec {
		c.rec = append(c.rec, []byte(f))
	}
	return c.rec, nil
}

func (c *csvSource) line() int { return c.ln }

func (c *csvSource) endedWithoutEOL() bool {
	return c.r.InputOffset() == int64(c.size) && !c.nlEnd
}

// event is a copy of what a scanner hands its sink.
type event struct {
	Kind         kind
	Step         int
	Micro, Vpp   int
	Module       string
	Tensor       string
	Side         side
	An           anomaly
	Line         int
	Warn         string
	Values       string
	IsRecordTick bool
}

type recSink struct{ ev []event }

func (s *recSink) record() { s.ev = append(s.ev, event{IsRecordTick: true}) }
func (s *recSink) warn(line int, msg string) {
	s.ev = append(s.ev, event{Line: line, Warn: msg})
}
func (s *recSink) row(t *tensorRow) {
	var vals []string
	for k := range t.cols.stat {
		vals = append(vals, t.value(k))
	}
	s.ev = append(s.ev, event{Kind: t.kind, Step: t.step, Micro: t.micro, Vpp: t.vpp, Module: string(t.module), Tensor: string(t.tensor), Side: t.side, An: t.an, Line: t.line, Values: strings.Join(vals, "|")})
}

// tee sends rows to two sinks.
type tee struct{ a, b sink }

func (t tee) record()                   { t.a.record(); t.b.record() }
func (t tee) warn(line int, msg string) { t.a.warn(line, msg); t.b.warn(line, msg) }
func (t tee) row(r *tensorRow)          { t.a.row(r); t.b.row(r) }

// naiveFirst is the reference for the streaming track: every row in
// memory, runs and calls recomputed, the minimum found by brute force.
type naiveFirst struct {
	ok              bool
	step            int
	count           int64
	line            int
	module, tensor  string
	call            int
	inSeen          int
	inBad           bool
	micro, vpp, key int
}

func naive(ev []event, k kind, weak bool) naiveFirst {
	type row struct {
		event
		run, call int
	}
	var rows []row
	runs := 0
	calls := map[int]int{}
	var prev *event
	for i := range ev {
		e := &ev[i]
		if e.IsRecordTick || e.Warn != "" || e.An.skip {
			continue
		}
		if prev == nil || prev.Kind != e.Kind || prev.Step != e.Step || prev.Micro != e.Micro || prev.Vpp != e.Vpp || prev.Module != e.Module {
			runs++
			if e.Kind == k {
				calls[e.Step]++
			}
		}
		prev = e
		if e.Kind == k {
			rows = append(rows, row{*e, runs, calls[e.Step] - 1})
		}
	}
	var out naiveFirst
	var best *row
	for i := range rows {
		r := &rows[i]
		if r.An.kind == anNone || r.An.weak != weak {
			continue
		}
		if !out.ok || r.Step < out.step {
			out = naiveFirst{ok: true, step: r.Step}
		}
	}
	if !out.ok {
		return out
	}
	for i := range rows {
		r := &rows[i]
		if r.An.kind == anNone || r.An.weak != weak || r.Step != out.step {
			continue
		}
		out.count++
		if best == nil || (orderKey{max(r.Micro, 0), vppKey(k, r.Vpp), r.call}).less(orderKey{max(best.Micro, 0), vppKey(k, best.Vpp), best.call}) {
			best = r
		}
	}
	out.line, out.module, out.tensor, out.call = best.Line, best.Module, best.Tensor, best.call
	for i := range rows {
		r := &rows[i]
		if r.run == best.run && r.Side == sideIn {
			out.inSeen++
			if r.An.kind != anNone && !r.An.weak {
				out.inBad = true
			}
		}
	}
	return out
}

// compareWithOracle runs the fast and the reference readers over one file.
func compareWithOracle(t *testing.T, data []byte, k kind) {
	t.Helper()
	// 1. Records: identical up to the first error, which must be the same.
	fast := newRecordReader(iotest.HalfReader(bytes.NewReader(data)), 16)
	ref := newCSVSource(data)
	for n := 0; ; n++ {
		ff, ferr := fast.next()
		rf, rerr := ref.next()
		if (ferr == nil) != (rerr == nil) || (ferr == io.EOF) != (rerr == io.EOF) {
			t.Fatalf("record %d: fast %q %v, encoding/csv %q %v", n, ff, ferr, rf, rerr)
		}
		var fse, rse *syntaxError
		if errors.As(ferr, &fse) {
			if !errors.As(rerr, &rse) || fse.line != rse.line {
				t.Fatalf("record %d: fast error %v, encoding/csv %v", n, ferr, rerr)
			}
			break
		}
		if ferr != nil {
			break
		}
		if !reflect.DeepEqual(ff, rf) && !(len(ff) == len(rf) && fmt.Sprint(ff) == fmt.Sprint(rf)) {
			t.Fatalf("record %d: fast %q, encoding/csv %q", n, ff, rf)
		}
		if fast.line() != ref.line() || fast.endedWithoutEOL() != ref.endedWithoutEOL() {
			t.Fatalf("record %d: fast line %d eol %v, encoding/csv line %d eol %v", n, fast.line(), fast.endedWithoutEOL(), ref.line(), ref.endedWithoutEOL())
		}
		// 2. Values: the fast classifier agrees with strconv.
		for _, f := range ff {
			if a, b := classify(f), classifySlow(f); a != b {
				t.Fatalf("value %q: fast %+v, strconv %+v", f, a, b)
			}
		}
	}

	// 3. Whole scan: identical events when encoding/csv reads everything.
	csvOK := true
	{
		r := csv.NewReader(bytes.NewReader(data))
		r.FieldsPerRecord = -1
		_, err := r.ReadAll()
		csvOK = err == nil
	}
	rs := newRankState(0, nil)
	fs := newFileSink(rs, "f.csv", 1<<30)
	fastSink := &recSink{}
	(&scanner{kind: k, classify: classify, sink: tee{fastSink, fs}}).scan(newRecordReader(bytes.NewReader(data), 64))
	if !csvOK {
		return
	}
	refSink := &recSink{}
	(&scanner{kind: k, classify: classifySlow, sink: refSink}).scan(newCSVSource(data))
	if !reflect.DeepEqual(fastSink.ev, refSink.ev) {
		for i := range min(len(fastSink.ev), len(refSink.ev)) {
			if !reflect.DeepEqual(fastSink.ev[i], refSink.ev[i]) {
				t.Fatalf("event %d: fast %+v, reference %+v", i, fastSink.ev[i], refSink.ev[i])
			}
		}
		t.Fatalf("fast %d events, reference %d", len(fastSink.ev), len(refSink.ev))
	}

	// 4. Streaming analysis against the naive one, for every kind.
	for kk := kind(0); kk < numKinds; kk++ {
		for _, weak := range []bool{false, true} {
			want := naive(refSink.ev, kk, weak)
			got := rs.tracks[kk].pick(weak)
			if got.ok != want.ok {
				t.Fatalf("%s weak=%v: streaming found %v, naive %v", kk, weak, got.ok, want.ok)
			}
			if !got.ok {
				continue
			}
			g := naiveFirst{ok: true, step: got.step, count: got.count, line: got.row.Line, module: got.row.Name, tensor: got.row.Tensor, call: got.row.Call, inSeen: got.inSeen, inBad: got.inBad}
			if g != want {
				t.Fatalf("%s weak=%v: streaming %+v, naive %+v", kk, weak, g, want)
			}
		}
	}
}

func oracleSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{
		[]byte("vpp_stage,name,step,micro_step,min,max,norm,nans,shape,dtype\n0,0.fc.input,0,0,1.0,2.0,3.0,0.0,\"[4, 8]\",torch.bfloat16\n0,0.fc.output,0,0,nan,nan,nan,2.0,\"[4, 8]\",torch.bfloat16\n"),
		[]byte("vpp_stage,module_name,step,input.norm,input.nans,output.norm,output.nans\r\n0,fc1_0,3,1.5,0.0,inf,0.0\r\n0,fc1_1,3,1e-05,0.0,-Infinity,1.0\r\n\r\n0,fc2_0,3,\"1.0\",0.0,NaN,nan"),
		[]byte("vpp_stage,step,module_name,scope,micro_step,min,max,mean,norm,nans\n0,2,layers.0.attn.input.0,forward,0,-1.0,1.0,0.0,2.0,0.0\n0,2,layers.0.attn.grad_input.0,backward,1,-inf,1.0,nan,inf,0.0\n0,2,x.output.0,comm,,1,1,1,1,0\n"),
		[]byte("param_name,step,norm,zeros\nw,1,0x1p3,0.1\nw,1,1_0,0\n\"a\nb\",1,\"\"\"\",1\n"),
		[]byte("vpp_stage,name,step,norm,min,max,mean,nans,shape,dtype\n0,0.w,5,inf,1,2,1.5,0.0,\"[0]\",torch.float32\n0,0.w,5,nan,nan,nan,nan,nan,nan,nan\n0,0.v,4,1e400,-1e400,1e-400,+.5,3,\"[2]\",torch.float16\n0,\"bad\"x,1\n"),
	}
	dir, err := os.MkdirTemp("", "monitor-seed")
	if err == nil {
		defer os.RemoveAll(dir)
		s := defaultSpec()
		s.ranks, s.steps, s.micro = 1, []int{0, 1}, 2
		s.mods[1].ins = 2
		s.fault = forwardBorn(0, 1, 1, 2)
		for _, style := range []string{StyleV1, StyleV1Old, StyleV2} {
			s.style = style
			d := filepath.Join(dir, style)
			for _, fd := range generate(t, d, s) {
				ents, _ := os.ReadDir(fd)
				for _, e := range ents {
					if strings.HasPrefix(e.Name(), "actv_1") || strings.HasPrefix(e.Name(), "module_step1") {
						b, _ := os.ReadFile(filepath.Join(fd, e.Name()))
						seeds = append(seeds, b)
					}
				}
			}
		}
	}
	return seeds
}

func TestOracleSeeds(t *testing.T) {
	for i, s := range oracleSeeds(t) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			compareWithOracle(t, s, kActv)
			compareWithOracle(t, s, kModuleV2)
			compareWithOracle(t, s, kGradUnreduced)
		})
	}
}

// FuzzScan checks the fast record reader, value classifier and streaming
// analysis against encoding/csv, strconv.ParseFloat and a naive analysis
// that holds every row.
func FuzzScan(f *testing.F) {
	for _, s := range oracleSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareWithOracle(t, data, kActv)
		compareWithOracle(t, data, kActvGrad)
		compareWithOracle(t, data, kModuleV2)
		compareWithOracle(t, data, kExpAvg)
	})
}
