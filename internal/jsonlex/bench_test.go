package jsonlex

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
)

// msprobeDoc returns a synthetic dump.json of about size bytes, shaped like
// what msprobe writes with Python's json.dump(indent=1): a header, then
// "data" with one entry per API call, each with input_args, input_kwargs
// and output lists of tensor statistics. About 5% of the statistics are
// NaN, Infinity or -Infinity.
func msprobeDoc(size int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	apis := []string{"Functional.linear", "Torch.matmul", "Tensor.__add__", "Functional.silu",
		"Torch.log", "Distributed.all_reduce", "Tensor.mul_", "Functional.layer_norm"}
	counters := make([]int, len(apis))
	dtypes := []string{"torch.float32", "torch.bfloat16", "torch.float16"}

	var b bytes.Buffer
	b.Grow(size + 4096)
	nl := func(indent int) {
		b.WriteByte('\n')
		for range indent {
			b.WriteByte(' ')
		}
	}
	stat := func() {
		switch p := rng.Float64(); {
		case p < 0.03:
			b.WriteString("NaN")
		case p < 0.04:
			b.WriteString("Infinity")
		case p < 0.05:
			b.WriteString("-Infinity")
		default:
			f := float64(float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(5)-2))))
			s := strconv.FormatFloat(f, 'g', -1, 64)
			b.WriteString(s)
			if !bytes.ContainsAny([]byte(s), ".e") {
				b.WriteString(".0")
			}
		}
	}
	tensor := func(indent int) {
		b.WriteByte('{')
		nl(indent + 1)
		b.WriteString(`"type": "torch.Tensor",`)
		nl(indent + 1)
		b.WriteString(`"dtype": "` + dtypes[rng.IntN(len(dtypes))] + `",`)
		nl(indent + 1)
		b.WriteString(`"shape": [`)
		for i, n := 0, 1+rng.IntN(4); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(indent + 2)
			b.WriteString(strconv.Itoa(1 << rng.IntN(12)))
		}
		nl(indent + 1)
		b.WriteString("],")
		for _, name := range []string{"Max", "Min", "Mean", "Norm"} {
			nl(indent + 1)
			b.WriteString(`"` + name + `": `)
			stat()
			b.WriteByte(',')
		}
		nl(indent + 1)
		b.WriteString(`"requires_grad": `)
		b.WriteString(strconv.FormatBool(rng.IntN(2) == 0))
		nl(indent)
		b.WriteByte('}')
	}
	list := func(indent, n int) {
		if n == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(indent + 1)
			tensor(indent + 1)
		}
		nl(indent)
		b.WriteByte(']')
	}

	b.WriteString(`{`)
	nl(1)
	b.WriteString(`"task": "statistics",`)
	nl(1)
	b.WriteString(`"level": "L1",`)
	nl(1)
	b.WriteString(`"framework": "pytorch",`)
	nl(1)
	b.WriteString(`"dump_data_dir": null,`)
	nl(1)
	b.WriteString(`"data": {`)
	for first := true; b.Len() < size; first = false {
		if !first {
			b.WriteByte(',')
		}
		a := rng.IntN(len(apis))
		nl(2)
		b.WriteString(`"` + apis[a] + "." + strconv.Itoa(counters[a]) + `.forward": {`)
		counters[a]++
		nl(3)
		b.WriteString(`"input_args": `)
		list(3, 1+rng.IntN(3))
		b.WriteByte(',')
		nl(3)
		b.WriteString(`"input_kwargs": {},`)
		nl(3)
		b.WriteString(`"output": `)
		list(3, 1)
		nl(2)
		b.WriteByte('}')
	}
	nl(1)
	b.WriteByte('}')
	b.WriteString("\n}")
	return b.Bytes()
}

var benchDoc = sync.OnceValue(func() []byte { return msprobeDoc(64 << 20) })

func TestMsprobeDoc(t *testing.T) {
	doc := msprobeDoc(1 << 20)
	got, err := lexAll(bytes.NewReader(doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, ok := oracleTokens(bytes.NewReader(bareShim(doc)))
	if !ok {
		t.Fatal("the oracle rejects the synthetic document")
	}
	if same, diff := equalToks(stripped(got), want); !same {
		t.Fatal(diff)
	}
	n := 0
	for _, tk := range got {
		if tk.Kind == NaN || tk.Kind == PosInf || tk.Kind == NegInf {
			n++
		}
	}
	if n == 0 {
		t.Error("no bare tokens")
	}
}

func BenchmarkNext(b *testing.B) {
	doc := benchDoc()
	r := bytes.NewReader(doc)
	l := New(r, Options{})
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r.Reset(doc)
		l.Reset(r)
		for {
			tk, err := l.Next()
			if err != nil {
				b.Fatal(err)
			}
			if tk.Kind == EOF {
				break
			}
		}
	}
}

func BenchmarkSkipValue(b *testing.B) {
	doc := benchDoc()
	r := bytes.NewReader(doc)
	l := New(r, Options{})
	// Read the header, then skip the value of every entry of "data".
	lines := func() error { return l.SkipObjectLines([]byte("\n  }")) } // an entry's closing line (indent 1)
	for _, skip := range []struct {
		name    string
		fn      func() error
		generic bool // with the plain Go structural pass, or closing-line search
	}{{"entries", l.SkipValue, false}, {"entries-fast", l.SkipValueFast, false}, {"entries-fast-generic", l.SkipValueFast, true},
		{"entries-lines", lines, false}, {"entries-lines-generic", lines, true}} {
		b.Run(skip.name, func(b *testing.B) {
			if skip.generic {
				defer setClassifyVector(setClassifyVector(false))
				defer setLineVector(setLineVector(false))
			}
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(doc)
				l.Reset(r)
				for {
					tk, err := l.Next()
					if err != nil {
						b.Fatal(err)
					}
					if tk.Kind == EOF {
						break
					}
					if tk.Kind == Name && l.Depth() == 2 {
						if err := skip.fn(); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		})
	}
	b.Run("document", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			r.Reset(doc)
			l.Reset(r)
			if err := l.SkipValue(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
