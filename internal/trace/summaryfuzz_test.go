package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzJoinSummary joins an arbitrary summary with a well-formed one of the
// same run. Whatever the bytes, the join does not panic; every line
// decodes as encoding/json decodes it (the line decoder's oracle); an
// error names a summary; and when the join goes on, a summary damaged at
// some line (by encoding/json's reading of it, independently of the
// loader) is a warning naming the file and that line's byte offset.
// Seeds: testdata/fuzz/FuzzJoinSummary, and the summary of a real run with
// a NaN, whole and cut.
func FuzzJoinSummary(f *testing.F) {
	files := summariseNodes(f, splitNodes(f, smallRun(f, logNegative), 2, rand.New(rand.NewSource(1))), false)
	real, err := os.ReadFile(files[1])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	for _, cut := range []int{len(real) / 3, len(real) / 2, len(real) - 2} {
		f.Add(real[:cut])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzed := filepath.Join(t.TempDir(), "node1.jsonl")
		if err := os.WriteFile(fuzzed, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			checkDecodeLine(t, l, false)
		}
		v, err := Run(context.Background(), Options{Summaries: []string{files[0], fuzzed}})
		if err != nil {
			if !strings.Contains(err.Error(), files[0]) && !strings.Contains(err.Error(), fuzzed) {
				t.Fatalf("an error that names no summary: %v", err)
			}
			return
		}
		if at, ok := firstDamage(data); ok && !strings.Contains(fmt.Sprint(v.Warnings), fmt.Sprintf("%s: offset %d: ", fuzzed, at)) {
			t.Fatalf("damaged at offset %d, and no warning says so: %+v", at, v.Warnings)
		}
	})
}

// firstDamage is where a summary that joins is damaged, read line by line
// with encoding/json: the first line that is not a summary line, a second
// header, a record of a step or rank no folder has, a record the header
// does not list that does not decode whole; else its end when it has no
// end line. ok is false for a summary read whole.
func firstDamage(data []byte) (offset int64, ok bool) {
	var h *summaryHeader
	listed := map[recordKey]bool{}
	ended := false
	for i, l := range bytes.SplitAfter(data, []byte("\n")) {
		at := offset
		offset += int64(len(l))
		if len(l) == 0 {
			break
		}
		var ll lightLine
		if json.Unmarshal(l, &ll) != nil || (ll.Header == nil && ll.Record == nil && ll.End == nil) || (ll.Header != nil && i > 0) {
			return at, true
		}
		switch {
		case ll.Header != nil:
			h = ll.Header
			for _, d := range h.Dirs {
				listed[recordKey{d.Mode, d.Step, d.Rank}] = true
			}
		case ll.Record != nil:
			r := ll.Record
			k := recordKey{r.Mode, r.Step, r.Rank}
			var whole summaryLine
			if checkStepRank(r.Step, r.Rank) != nil || (!listed[k] && json.Unmarshal(l, &whole) != nil) {
				return at, true
			}
			listed[k] = true
		default:
			ended = true
		}
	}
	return offset, h != nil && !ended
}
