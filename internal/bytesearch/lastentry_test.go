package bytesearch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
)

// lastEntryRef is LastEntry's rule over the whole file: the last line that
// starts with "\n", the indentation and a quote, whose name (up to the next
// quote, on the same line) isBackward accepts.
func lastEntryRef(data []byte, indent int, isBackward func([]byte) bool) int64 {
	line := append(append([]byte{'\n'}, bytes.Repeat([]byte{' '}, 2*indent)...), '"')
	found := int64(-1)
	for i := range data {
		if name, ok := entryName(data, i, line); ok && MayBeBackward(name) && isBackward(name) {
			found = int64(i + len(line) - 1)
		}
	}
	return found
}

func isBackwardTest(name []byte) bool { return dump.ParseName(string(name)).IsBackward() }

// randomDump writes entries with names of every form, and the needles in
// places that are not names: values, deeper lines, lines of another indent.
func randomDump(r *rand.Rand, indent int) []byte {
	names := []string{"Torch.add.%d.forward", "Torch.add.%d.backward", "Module.l.Linear.backward.%d",
		"Module.l.Linear.parameters_grad", "Distributed.all_reduce_%d_1", "Distributed.all_reduce_%d_0",
		"Functional.backward_hook.%d.forward", "Tensor.x_1.%d.forward", "odd_1"}
	values := []string{`"backward"`, `"meters_grad"`, `"a_1"`, `1.5`, `"x\"_1"`, "\"\n  \\\"Torch.a.0.backward\""}
	pad := func(d int) string { return string(bytes.Repeat([]byte{' '}, d*indent)) }
	var b bytes.Buffer
	b.WriteString("{\n" + pad(1) + `"task": "statistics",` + "\n" + pad(1) + `"data": {`)
	for i := range r.IntN(40) {
		name := fmt.Sprintf(names[r.IntN(len(names))], i)
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n%s\"%s\": {\n%s\"v\": %s,\n%s\"%s\": 0\n%s}", pad(2), name, pad(3),
			values[r.IntN(len(values))], pad(3), names[r.IntN(len(names))], pad(2))
	}
	b.WriteString("\n" + pad(1) + "}\n}\n")
	return b.Bytes()
}

// LastEntry, window by window, agrees with the whole-file rule on random
// dumps, at window sizes that cut names and lines everywhere.
func TestLastEntryAgainstRule(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for n := range 2000 {
		indent := 1 + n%2
		data := randomDump(r, indent)
		want := lastEntryRef(data, indent, isBackwardTest)
		win := []int{64, 97, 256, 4096}[n%4]
		got, err := lastEntry(bytes.NewReader(data), int64(len(data)), indent, isBackwardTest, win, 80)
		if err != nil || got != want {
			t.Fatalf("dump %d (indent %d, window %d): lastEntry = %d, %v; want %d\n%s", n, indent, win, got, err, want, data)
		}
	}
}

func FuzzLastEntry(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 8 {
		f.Add(randomDump(r, 1), uint8(1), uint16(64))
	}
	f.Fuzz(func(t *testing.T, data []byte, indent uint8, win uint16) {
		in := 1 + int(indent%3)
		w := 16 + int(win%2048)
		// names longer than the overlap may be cut: keep them shorter
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			if len(line) > 200 {
				return
			}
		}
		want := lastEntryRef(data, in, isBackwardTest)
		got, err := lastEntry(bytes.NewReader(data), int64(len(data)), in, isBackwardTest, w, 256)
		if err != nil || got != want {
			t.Fatalf("indent %d, window %d: lastEntry = %d, %v; want %d", in, w, got, err, want)
		}
	})
}
