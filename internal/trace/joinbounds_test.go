package trace

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"
)

// editLine rewrites line i (0 the header) of a summary by replacing old
// with new in it.
func editLine(t *testing.T, file string, i int, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if !bytes.Contains(lines[i], []byte(old)) {
		t.Fatalf("%s line %d has no %q", file, i, old)
	}
	lines[i] = bytes.Replace(lines[i], []byte(old), []byte(new), 1)
	writeTestFile(t, file, string(bytes.Join(lines, nil)))
}

// lineOffset is where line i of a summary starts.
func lineOffset(t *testing.T, file string, i int) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	for range i {
		off += bytes.IndexByte(b[off:], '\n') + 1
	}
	return off
}

// Numbers in a summary that summarize cannot have written are refused
// (the header) or are damage at their line (a record), and a record that
// breaks only when its step is read makes that rank-step unread with a
// warning at its offset: the join neither loops on a number nor fails for
// one record.
func TestJoinBoundsHostileNumbers(t *testing.T) {
	for _, c := range []struct {
		name  string
		line  int // the line edited: 0 the header, 1 the first record
		old   string
		new   string
		err   string // the join fails so
		warns string // or warns so, at the line's offset
	}{
		{"node count", 0, `"count":3`, `"count":1099511627776`, "offset 0: not a summary nanhunt wrote: node count 1099511627776", ""},
		{"node index", 0, `"index":1`, `"index":-7`, "offset 0: not a summary nanhunt wrote: node index -7", ""},
		{"folder step", 0, `"step":0`, `"step":-3`, "offset 0: not a summary nanhunt wrote: rank folder", ""},
		{"record rank", 1, `"rank":`, `"rank":1000000000,"x":`, "", "damaged (a record of rank 1000000000"},
		{"record step", 1, `"step":0`, `"step":-1`, "", "damaged (a record of step -1"},
		{"record events", 1, `"seen":`, `"events":"x","seen":`, "", "cannot be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			files := summariseNodes(t, splitNodes(t, smallRun(t, logNegative), 3, rand.New(rand.NewSource(1))), false)
			editLine(t, files[1], c.line, c.old, c.new)
			v, err := Run(context.Background(), Options{Summaries: files})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), files[1]) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v: want one naming %s and %q", err, files[1], c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			at := fmt.Sprintf("%s: offset %d: ", files[1], lineOffset(t, files[1], c.line))
			if !strings.Contains(fmt.Sprint(v.Warnings), at) || !strings.Contains(fmt.Sprint(v.Warnings), c.warns) {
				t.Errorf("warnings %+v: want one at %q saying %q", v.Warnings, at, c.warns)
			}
			if v.Complete {
				t.Errorf("complete with a damaged summary")
			}
		})
	}
}

// A process group naming rank 999,999,999 in a join with a node missing:
// the ranks without a summary are filled in up to rank 131,071 only, at
// once.
func TestJoinBoundsHugeGroupRank(t *testing.T) {
	files := summariseNodes(t, splitNodes(t, smallRun(t, logNegative), 3, rand.New(rand.NewSource(1))), false)
	editRecord(t, files, 2, 1, func(r *record) { r.Groups = map[string][]int{"gX": {1, 999_999_999}} })
	start := time.Now()
	v, err := Run(context.Background(), Options{Summaries: files[:2]})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	if v.Complete || len(v.MissingNodes) != 1 {
		t.Errorf("complete %v, missing nodes %+v: want a missing node", v.Complete, v.MissingNodes)
	}
}
