package jsonlex

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// randomDoc writes a random JSON document in the lexer's dialect, with
// random whitespace, escapes and numbers near the edges of the grammar.
func randomDoc(rng *rand.Rand, b *strings.Builder, depth int) {
	ws := func() {
		for rng.IntN(3) == 0 {
			b.WriteByte(" \t\n\r"[rng.IntN(4)])
		}
	}
	str := func() {
		b.WriteByte('"')
		for n := rng.IntN(6); n > 0; n-- {
			pieces := []string{"a", "Z", " ", "é", "😀", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`,
				`\u0041`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\udc00`, `\uD800\uD800`, "\xff", "NaN", "-Infinity"}
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		b.WriteByte('"')
	}
	ws()
	switch k := rng.IntN(10); {
	case depth < 6 && k < 2:
		b.WriteByte('{')
		for i, n := 0, rng.IntN(4); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			str()
			ws()
			b.WriteByte(':')
			randomDoc(rng, b, depth+1)
		}
		ws()
		b.WriteByte('}')
	case depth < 6 && k < 4:
		b.WriteByte('[')
		for i, n := 0, rng.IntN(4); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			randomDoc(rng, b, depth+1)
		}
		ws()
		b.WriteByte(']')
	case k < 6:
		nums := []string{"0", "-0", "1", "-12", "3.25", "0.5E-3", "1e309", "-4.064884279869618e-12", "7E+2", "10"}
		b.WriteString(nums[rng.IntN(len(nums))])
	case k < 7:
		str()
	default:
		words := []string{"true", "false", "null", "NaN", "Infinity", "-Infinity"}
		b.WriteString(words[rng.IntN(len(words))])
	}
	ws()
}

// TestRandomDifferential runs the fuzz checks on random documents and on
// random corruptions of them, so that plain go test covers more than the
// seed corpus.
func TestRandomDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	n := 3000
	if testing.Short() {
		n = 300
	}
	junk := []string{"", ",", ":", "{", "}", "[", "]", `"`, `\`, "-", ".", "e", "0", "N", "I", "n", "x", "\x00", "\n", " "}
	for i := 0; i < n; i++ {
		var b strings.Builder
		randomDoc(rng, &b, 0)
		in := []byte(b.String())
		if i%2 == 1 && len(in) > 0 {
			// Corrupt: replace, insert or delete a few bytes.
			for m := 1 + rng.IntN(3); m > 0 && len(in) > 0; m-- {
				p := rng.IntN(len(in))
				j := junk[rng.IntN(len(junk))]
				switch rng.IntN(3) {
				case 0:
					in = append(in[:p], append([]byte(j), in[p+1:]...)...)
				case 1:
					in = append(in[:p], append([]byte(j), in[p:]...)...)
				default:
					in = append(in[:p], in[p+1:]...)
				}
			}
		}
		t.Run("", func(t *testing.T) {
			checkLexer(t, in)
			checkSkip(t, in, uint16(rng.Uint32()))
		})
		if t.Failed() {
			t.Fatalf("input %q", in)
		}
	}
}
