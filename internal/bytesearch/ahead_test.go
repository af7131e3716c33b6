package bytesearch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

var testAheadRules = AheadRules{IntDigits: 4, Exponent: 36, APIs: []string{"exp", "exp_", "expm1", "exp2", "sinh", "cosh"}}

// aheadDoc writes a dump-like document with values and names of every
// kind around the search's thresholds, and returns the offsets a reader
// would find: the numbers of Max and Min members that are large enough,
// and the quotes of names of the exp family.
func aheadDoc(rng *rand.Rand, n int) (doc []byte, numbers, names []int) {
	var sb strings.Builder
	sb.WriteString("{\n \"data\": {\n")
	values := []string{"44000.0", "-10000.0", "1024.0", "999.0", "65504.0", "0.0", "1.0", "12.5", "1234.5", "3.4e+38", "-2.5e+36",
		"1e+35", "1.5e-40", "0.0001234", "123456789.0", "NaN", "-Infinity", "1e+300", "7.0e+36", "12345"}
	apis := []string{"exp", "expand", "exp_", "expm1", "exp2", "cos", "cosh", "sinh", "sin", "silu", "contiguous", "special_exp2", "exponential_"}
	for i := range n {
		api := apis[rng.IntN(len(apis))]
		name := fmt.Sprintf("Torch.%s.%d.forward", api, i)
		q := sb.Len() + 2
		fmt.Fprintf(&sb, "  %q: {\n   \"input_args\": [\n", name)
		switch strings.TrimPrefix(api, "special_") {
		case "exp", "exp_", "expm1", "exp2", "sinh", "cosh":
			names = append(names, q)
		}
		for range 1 + rng.IntN(3) {
			sb.WriteString("    {\n     \"type\": \"torch.Tensor\",\n     \"dtype\": \"torch.float16\",\n")
			for _, key := range []string{"Max", "Min", "Mean", "Norm"} {
				v := values[rng.IntN(len(values))]
				fmt.Fprintf(&sb, "     %q: ", key)
				at := sb.Len()
				sb.WriteString(v + ",\n")
				if (key == "Max" || key == "Min") && largeLiteral(v) {
					numbers = append(numbers, at)
				}
			}
			sb.WriteString("     \"requires_grad\": false\n    },\n")
		}
		sb.WriteString("   ]\n  },\n")
	}
	sb.WriteString(" }\n}\n")
	return []byte(sb.String()), numbers, names
}

// largeLiteral is the rule written plainly: four digits before the point
// of a whole number, or an exponent of 36 or more.
func largeLiteral(v string) bool {
	v = strings.TrimPrefix(v, "-")
	if mant, exp, ok := strings.Cut(v, "e+"); ok && mant != "" {
		var e int
		fmt.Sscan(exp, &e)
		return e >= 36
	}
	whole, frac, ok := strings.Cut(v, ".")
	return ok && frac == "0" && len(whole) >= 4
}

func TestFindAheadMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 200 {
		doc, numbers, names := aheadDoc(rng, 1+rng.IntN(40))
		var vec, sc AheadFinds
		FindAhead(doc, testAheadRules, &vec)
		scalarAhead(doc, 0, len(doc), testAheadRules, &sc)
		if !slices.Equal(vec.Numbers, sc.Numbers) || !slices.Equal(vec.Names, sc.Names) {
			t.Fatalf("round %d: vector %+v, scalar %+v", round, vec, sc)
		}
		if !slices.Equal(vec.Numbers, numbers) {
			t.Fatalf("round %d: numbers %v, want %v", round, vec.Numbers, numbers)
		}
		if !slices.Equal(vec.Names, names) {
			t.Fatalf("round %d: names %v, want %v", round, vec.Names, names)
		}
	}
}

// Marks at every offset of a block, at the edges of the document and of
// the vector blocks, are found as the scalar search finds them.
func TestFindAheadEdges(t *testing.T) {
	for pad := range 70 {
		for _, v := range []string{`"Max": 44000.0`, `"min": -3.5e+37`, `"Torch.exp.0.forward"`} {
			doc := []byte(strings.Repeat(" ", pad) + v + strings.Repeat(" ", pad%5))
			var vec, sc AheadFinds
			FindAhead(doc, testAheadRules, &vec)
			scalarAhead(doc, 0, len(doc), testAheadRules, &sc)
			if len(vec.Numbers)+len(vec.Names) != 1 || !slices.Equal(vec.Numbers, sc.Numbers) || !slices.Equal(vec.Names, sc.Names) {
				t.Errorf("pad %d %s: vector %+v, scalar %+v", pad, v, vec, sc)
			}
		}
	}
}

func BenchmarkFindAhead(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	doc, _, _ := aheadDoc(rng, 20000)
	b.SetBytes(int64(len(doc)))
	var f AheadFinds
	for b.Loop() {
		f.Numbers, f.Names = f.Numbers[:0], f.Names[:0]
		FindAhead(doc, testAheadRules, &f)
	}
}
