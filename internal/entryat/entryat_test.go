package entryat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/fixturedir"
)

// entryCopy is e with its slices copied (the dump reader reuses them),
// as text: NaN statistics compare equal so.
func entryCopy(e *dump.Entry, index int) string {
	c := *e
	c.Index = index
	c.Tensors = slices.Clone(e.Tensors)
	c.Args = slices.Clone(e.Args)
	c.Kwargs = slices.Clone(e.Kwargs)
	return fmt.Sprintf("%+v", c)
}

// Every entry of a real dump.json read again from its range, from the
// file or from the reader's window, is the entry the reader read.
func TestReadAndParseGiveTheReadersEntries(t *testing.T) {
	file := filepath.Join(fixturedir.Dir(t), "msprobe-generated/bwd-sqrt-zero-rank2-step5/mix/step5/rank2/dump.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var full []string
	r := dump.NewReader(bytes.NewReader(data), dump.ReaderOptions{Details: true})
	var ranges [][2]int64
	for r.Next() {
		ranges = append(ranges, [2]int64{r.Entry().Offset, r.Entry().End})
		full = append(full, entryCopy(r.Entry(), r.Entry().Index))
	}
	if r.Err() != nil || len(full) < 10 {
		t.Fatalf("%d entries, %v", len(full), r.Err())
	}
	at := New(dump.ReaderOptions{Details: true})
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, want := range full {
		e, err := at.Read(f, ranges[i][0], ranges[i][1])
		if err != nil {
			t.Fatal(err)
		}
		if got := entryCopy(e, i); got != want {
			t.Fatalf("entry %d read again differs:\n%+v\nwant\n%+v", i, got, want)
		}
	}
	// The same from the reader's window, without reading the file again.
	raw := dump.NewReader(bytes.NewReader(data), dump.ReaderOptions{Select: func(string, int64) bool { return false }})
	at2 := New(dump.ReaderOptions{Details: true})
	for i := 0; raw.Next(); i++ {
		b := raw.Raw()
		if b == nil {
			t.Fatalf("entry %d not in the window", i)
		}
		e, err := at2.Parse(b, raw.Entry().Offset)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if got := entryCopy(e, i); got != full[i] {
			t.Fatalf("entry %d parsed from the window differs", i)
		}
	}
	if _, err := at.Read(f, 5, 3); err == nil {
		t.Error("a reversed range was accepted")
	}
}
