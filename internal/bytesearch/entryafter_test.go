package bytesearch

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// entryAfterRef is EntryAfter's rule over the whole file: the first entry
// line (as lastEntryRef reads them) whose quote lies past after and whose
// name isBackward accepts.
func entryAfterRef(data []byte, after int64, indent int, isBackward func([]byte) bool) int64 {
	line := append(append([]byte{'\n'}, bytes.Repeat([]byte{' '}, 2*indent)...), '"')
	for i := range data {
		quote := int64(i + len(line) - 1)
		if quote <= after {
			continue
		}
		if name, ok := entryName(data, i, line); ok && MayBeBackward(name) && isBackward(name) {
			return quote
		}
	}
	return -1
}

// EntryAfter, window by window, agrees with the whole-file rule on random
// dumps from every offset, at window sizes that cut names and lines
// everywhere; with a read limit it finds the same entry or none.
func TestEntryAfterAgainstRule(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for n := range 600 {
		indent := 1 + n%2
		data := randomDump(r, indent)
		win := []int{64, 97, 256, 4096}[n%4]
		for after := int64(-1); after < int64(len(data)); after++ {
			want := entryAfterRef(data, after, indent, isBackwardTest)
			got, err := entryAfter(bytes.NewReader(data), after, int64(len(data))+1, int64(len(data)), indent, isBackwardTest, win, 80)
			if err != nil || got != want {
				t.Fatalf("dump %d (indent %d, window %d) after %d: entryAfter = %d, %v; want %d\n%s", n, indent, win, after, got, err, want, data)
			}
			limit := int64(r.IntN(300))
			got, err = entryAfter(bytes.NewReader(data), after, limit, int64(len(data)), indent, isBackwardTest, win, 80)
			if err != nil || (got != want && got != -1) {
				t.Fatalf("dump %d after %d, limit %d: entryAfter = %d, %v; want %d or -1", n, after, limit, got, err, want)
			}
		}
	}
}

// What EntryAfter finds past an offset is what decides a masks-only file,
// as LastEntry does: a backward entry lies past after exactly when the last
// one does, and EntryAfter with no limit finds one exactly then.
func TestEntryAfterDecidesAsLastEntry(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for n := range 400 {
		data := randomDump(r, 1)
		last := lastEntryRef(data, 1, isBackwardTest)
		for after := int64(-1); after < int64(len(data)); after += 7 {
			got, err := EntryAfter(bytes.NewReader(data), after, int64(len(data)), int64(len(data)), 1, isBackwardTest)
			if err != nil || (got >= 0) != (last > after) || (got >= 0 && got > last) {
				t.Fatalf("dump %d after %d: EntryAfter = %d, %v; LastEntry %d", n, after, got, err, last)
			}
		}
	}
}

func FuzzEntryAfter(f *testing.F) {
	r := rand.New(rand.NewPCG(15, 16))
	for range 8 {
		f.Add(randomDump(r, 1), uint8(1), uint16(64), uint16(30))
	}
	f.Fuzz(func(t *testing.T, data []byte, indent uint8, win, after uint16) {
		in := 1 + int(indent%3)
		w := 16 + int(win%2048)
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			if len(line) > 200 {
				return // names longer than the overlap may be cut
			}
		}
		at := int64(after) % int64(len(data)+1)
		want := entryAfterRef(data, at, in, isBackwardTest)
		got, err := entryAfter(bytes.NewReader(data), at, int64(len(data))+1, int64(len(data)), in, isBackwardTest, w, 256)
		if err != nil || got != want {
			t.Fatalf("indent %d, window %d, after %d: entryAfter = %d, %v; want %d", in, w, at, got, err, want)
		}
	})
}
