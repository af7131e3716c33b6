package jsonlex

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// indexAfterNewlineBytes is the definition of IndexAfterNewline, one byte
// at a time.
func indexAfterNewlineBytes(b []byte, from, dist int, last byte) int {
	for i := from; i < len(b); i++ {
		if b[i] == last && b[i-dist] == '\n' {
			return i
		}
	}
	return -1
}

// lastIndexAfterNewlineBytes is the definition of LastIndexAfterNewline.
func lastIndexAfterNewlineBytes(b []byte, hi, dist int, last byte) int {
	for i := hi - 1; i >= dist; i-- {
		if b[i] == last && b[i-dist] == '\n' {
			return i
		}
	}
	return -1
}

// Both line searches, by the vector path where the CPU has it and by the
// plain Go path, are their byte-by-byte definitions at every start (or
// end), for every distance and a mix of the bytes that matter.
func TestLineSearchesLikeBytes(t *testing.T) {
	searches := []struct {
		name          string
		search, bytes func(b []byte, at, dist int, last byte) int
		generic       func(b []byte, at, dist int, last byte) int
		first         func(dist int) int // the first start or end tried
	}{
		{"forward", IndexAfterNewline, indexAfterNewlineBytes, indexAfterNewlineGeneric, func(dist int) int { return dist }},
		{"backward", LastIndexAfterNewline, lastIndexAfterNewlineBytes, func(b []byte, hi, dist int, last byte) int {
			return lastIndexAfterNewlineGeneric(b, dist, hi, dist, last)
		}, func(int) int { return 0 }},
	}
	alphabet := []byte("\n }]\"a\n  ")
	for _, s := range searches {
		rng := rand.New(rand.NewPCG(5, 9))
		for _, vector := range []bool{true, false} {
			was := setLineVector(vector)
			for range 400 {
				b := make([]byte, 1+rng.IntN(300))
				for j := range b {
					b[j] = alphabet[rng.IntN(len(alphabet))]
				}
				dist := 1 + rng.IntN(12)
				for at := s.first(dist); at <= len(b); at++ {
					want := s.bytes(b, at, dist, '}')
					got, generic := s.search(b, at, dist, '}'), s.generic(b, at, dist, '}')
					if got != want || generic != want {
						setLineVector(was)
						t.Fatalf("%s, vector %v, %q at %d, dist %d: %d (plain Go %d), want %d", s.name, vector, b, at, dist, got, generic, want)
					}
				}
			}
			setLineVector(was)
		}
	}
}

// A close line is found wherever it lies around the 32-byte blocks, and a
// '}' or a newline alone is not one.
func TestCloseLineEndEveryPosition(t *testing.T) {
	close := []byte("\n    }")
	for _, vector := range []bool{true, false} {
		was := setLineVector(vector)
		for n := 0; n < 140; n++ {
			for at := 0; at+len(close) <= n; at++ {
				b := bytes.Repeat([]byte{' '}, n)
				for j := 3; j < n; j += 7 {
					b[j] = '}' // deeper lines' brackets: never a close
				}
				b[0] = '\n'
				copy(b[at:], close)
				want := bytes.Index(b, close) + len(close) // at, or a close the brackets made before it
				if got := closeLineEnd(b, 0, close); got != want {
					setLineVector(was)
					t.Fatalf("vector %v, close at %d of %d bytes: %d, want %d", vector, at, n, got, want)
				}
			}
		}
		setLineVector(was)
	}
}

// FuzzIndexAfterNewline: on any bytes, from any start (or up to any end)
// and at any distance, the vector line searches (where the CPU has them)
// and the plain Go ones find what the byte-by-byte definitions find.
func FuzzIndexAfterNewline(f *testing.F) {
	f.Add([]byte("{\n  \"a\": {\n    \"b\": 1\n  }\n}"), uint8(0), uint8(3))
	f.Add(bytes.Repeat([]byte("\n   }"), 20), uint8(5), uint8(4))
	f.Fuzz(func(t *testing.T, b []byte, from, dist uint8) {
		d := 1 + int(dist%16)
		start := d + int(from)
		if start > len(b) {
			return
		}
		want := indexAfterNewlineBytes(b, start, d, '}')
		if got := IndexAfterNewline(b, start, d, '}'); got != want {
			t.Fatalf("%q from %d, dist %d: %d, want %d", b, start, d, got, want)
		}
		if got := indexAfterNewlineGeneric(b, start, d, '}'); got != want {
			t.Fatalf("generic: %q from %d, dist %d: %d, want %d", b, start, d, got, want)
		}
		hi := len(b) - int(from)
		want = lastIndexAfterNewlineBytes(b, hi, d, '}')
		if got := LastIndexAfterNewline(b, hi, d, '}'); got != want {
			t.Fatalf("%q up to %d, dist %d: %d, want %d", b, hi, d, got, want)
		}
		if got := lastIndexAfterNewlineGeneric(b, d, hi, d, '}'); got != want {
			t.Fatalf("generic: %q up to %d, dist %d: %d, want %d", b, hi, d, got, want)
		}
	})
}
