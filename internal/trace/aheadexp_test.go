package trace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/ahead"
	"github.com/nanhunt/nanhunt/internal/entryat"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// expUnwatched never passes an entry in which the reader and ahead.Observe
// find a watched value, on entries of the exp family written in many
// shapes (key orders, missing and odd keys, nested and non-tensor inputs,
// values around the limits), and it does pass the plain ones far from
// their limits.
func TestExpUnwatchedNeverHidesAWatchedValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 4))
	m := policy.Default().Matcher()
	x := entryat.New(dump.ReaderOptions{Details: true})
	passed := 0
	for i := range 20000 {
		raw := expEntry(rng, i)
		skip := expUnwatched([]byte(raw))
		e, err := x.Parse([]byte(raw), 0)
		if err != nil {
			continue
		}
		watched := false
		for _, v := range ahead.Observe(e, m.AheadCounts(e), nil) {
			watched = watched || v.Watched()
		}
		if skip && watched {
			t.Fatalf("passed an entry with a watched value:\n%s", raw)
		}
		if skip {
			passed++
		}
	}
	if passed < 5000 {
		t.Errorf("passed %d entries of 20000: the shortcut does not serve", passed)
	}
}

// expEntry writes one entry of the exp family, as msprobe does or not.
func expEntry(rng *rand.Rand, i int) string {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	name := fmt.Sprintf("%s.%s.%d.%s", pick("Torch", "Tensor", "MyKern"), pick("exp", "exp_", "expm1", "exp2", "sinh", "cosh", "special_exp2", "expand"), i, pick("forward", "forward", "backward"))
	dtype := func() string {
		return pick("torch.float16", "torch.bfloat16", "torch.float32", "torch.float64", "torch.int64", "torch.half")
	}
	num := func() string {
		return pick("0.5", "5.0", "5.6", "8.0", "11.0", "11.2", "44.0", "45.0", "88.0", "90.0", "709.0", "-3.0", "NaN", "Infinity", `"6.0"`, "1e1", "null", "true")
	}
	tensor := func() string {
		members := []string{fmt.Sprintf("%q: %q", "type", "torch.Tensor"), fmt.Sprintf("%q: %q", "dtype", dtype()),
			`"shape": [4, 8]`, `"Max": ` + num(), `"Min": -1.0`, `"Mean": 0.1`, `"Norm": 3.0`, `"requires_grad": false`}
		switch rng.IntN(8) {
		case 0:
			members = append(members, `"max": `+num())
		case 1:
			members = append(members, `"Max": `+num())
		case 2:
			members = members[:3]
		case 3:
			rng.Shuffle(len(members), func(a, b int) { members[a], members[b] = members[b], members[a] })
		}
		return "{" + strings.Join(members, ", ") + "}"
	}
	arg0 := tensor()
	switch rng.IntN(10) {
	case 0:
		arg0 = `{"type": "int", "value": 4}`
	case 1:
		arg0 = "[" + tensor() + "]"
	}
	fields := []string{`"input_args": [` + arg0 + `]`, `"input_kwargs": {}`, `"output": [` + tensor() + `]`}
	switch rng.IntN(6) {
	case 0:
		fields = fields[:2]
	case 1:
		fields[0], fields[2] = fields[2], fields[0]
	case 2:
		fields[1] = `"input_kwargs": {"out": ` + tensor() + `}`
	}
	return fmt.Sprintf("%q: {%s}", name, strings.Join(fields, ", "))
}

// BenchmarkExpUnwatched reads an exp call's entry as msprobe writes it
// (json.dump(indent=1)), far from its limit: what the search for values
// heading for overflow does for every exp call of the step it judges.
func BenchmarkExpUnwatched(b *testing.B) {
	raw := []byte(`"Torch.exp.0.forward": {
   "input_args": [
    {
     "type": "torch.Tensor",
     "dtype": "torch.bfloat16",
     "shape": [
      4,
      2048,
      4096
     ],
     "Max": 0.4442889161144027,
     "Min": -0.4018769971559951,
     "Mean": 0.001348995492313874,
     "Norm": 762.9193619373457,
     "requires_grad": true
    }
   ],
   "input_kwargs": {},
   "output": [
    {
     "type": "torch.Tensor",
     "dtype": "torch.bfloat16",
     "shape": [
      4,
      2048,
      4096
     ],
     "Max": 2.6008485011825515,
     "Min": -2.325207782771339,
     "Mean": -0.005588661193221374,
     "Norm": 15.713339990943604,
     "requires_grad": true
    }
   ]
  },`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if !expUnwatched(raw) {
			b.Fatal("not passed")
		}
	}
}
