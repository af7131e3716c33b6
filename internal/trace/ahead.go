package trace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/ahead"
	"github.com/nanhunt/nanhunt/internal/bytesearch"
	"github.com/nanhunt/nanhunt/internal/entryat"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/safeio"
	"github.com/nanhunt/nanhunt/verdict"
)

// aheadStep is the step the warnings before the NaN are judged at: the
// last dumped step before the origin's, or the last dumped step of a run
// without one; false when there is none.
func aheadStep(v *verdict.Verdict, dirs []dump.RankDir) (int, bool) {
	best, ok := 0, false
	for _, d := range dirs {
		if v.Origin != nil && d.Step >= v.Origin.Step {
			continue
		}
		if !ok || d.Step > best {
			best, ok = d.Step, true
		}
	}
	return best, ok
}

// findAhead finds the statistics heading for overflow (package ahead),
// judged at aheadStep (AheadAt).
func findAhead(ctx context.Context, v *verdict.Verdict, dirs []dump.RankDir, pol *policy.Policy, jobs int) ([]verdict.Ahead, []verdict.Warning) {
	step, ok := aheadStep(v, dirs)
	if !ok {
		return []verdict.Ahead{}, nil
	}
	return AheadAt(ctx, dirs, step, pol, jobs, nil)
}

// AheadAt is the statistics heading for overflow judged at step (README
// "How it decides", 12): from the values each rank's file of that step
// holds close to their limit (found by bytesearch.FindAhead, then parsed
// entry by entry) and the same calls' values at the dumped steps before.
// dirs are the rank folders to read: those of step and of the steps
// before it that a series may reach back to (a rank's last
// policy.AheadShown dumped steps are enough; later steps are left out, and
// a rank without a folder at step has no series). A trace judges at the
// last dumped step before the origin; a watch at each step it checks
// without an anomaly. pol is the rule set (which values are a call's own:
// policy.Matcher.AheadCounts). jobs bounds the files read at once. A file
// it cannot read gives a warning; it never fails.
//
// given, when set, names the warnings already given (a watch's): their
// series are not read, so the list lacks them, unless the tensor's other
// statistic is watched at step and not given (the two are compared,
// README 12); every warning not given is as it would be without given.
func AheadAt(ctx context.Context, dirs []dump.RankDir, step int, pol *policy.Policy, jobs int, given func(op, tensor, stat string) bool) ([]verdict.Ahead, []verdict.Warning) {
	byRank := map[int][]dump.RankDir{}
	for _, d := range dirs {
		if d.Step <= step && d.Dump != "" {
			byRank[d.Rank] = append(byRank[d.Rank], d)
		}
	}
	var ranks []int
	for _, r := range slices.Sorted(maps.Keys(byRank)) {
		rd := byRank[r]
		slices.SortFunc(rd, func(a, b dump.RankDir) int { return a.Step - b.Step })
		if rd[len(rd)-1].Step == step {
			ranks = append(ranks, r)
		}
	}
	vals := make([][]ahead.Value, len(ranks))
	warns := make([][]verdict.Warning, len(ranks))
	forEachRank(len(ranks), jobs, func(i int) {
		last := byRank[ranks[i]][len(byRank[ranks[i]])-1]
		var err error
		if vals[i], err = watchedValues(ctx, last.Dump, pol.Matcher()); err != nil && ctx.Err() == nil {
			warns[i] = []verdict.Warning{{File: last.Dump, Message: "not searched for values heading for overflow: " + err.Error()}}
		}
	})
	if given != nil {
		dropGiven(vals, given)
	}
	series := make([][]ahead.Series, len(ranks))
	forEachRank(len(ranks), jobs, func(i int) {
		series[i] = rankAhead(ctx, ranks[i], byRank[ranks[i]], vals[i], pol.Matcher())
	})
	var all []ahead.Series
	for _, s := range series {
		all = append(all, s...)
	}
	return ahead.Warnings(all, siteReader(byRank, all)), slices.Concat(warns...)
}

// siteReader gives the module chain and code line of a call on a rank,
// reading the rank's stack.json and construct.json once, on the first
// call asked about there, for every call with a series on it.
func siteReader(byRank map[int][]dump.RankDir, series []ahead.Series) func(rank int, op string) ahead.Site {
	ops := map[int][]string{}
	for _, s := range series {
		ops[s.Rank] = append(ops[s.Rank], s.Op)
	}
	read := map[int]*rankFiles{}
	return func(rank int, op string) ahead.Site {
		rf, ok := read[rank]
		if !ok {
			rd := byRank[rank]
			rf = readSideFiles(rd[len(rd)-1], slices.Compact(slices.Sorted(slices.Values(ops[rank]))))
			read[rank] = rf
		}
		var s ahead.Site
		if rf.construct != nil {
			s.Module = rf.construct.Chain(op)
		}
		if uf := userFrames(rf.stackOf(op)); len(uf) > 0 {
			s.Code = &uf[0]
		}
		return s
	}
}

// forEachRank calls fn(0) … fn(n-1), at most jobs at once.
func forEachRank(n, jobs int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, jobs))
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			fn(i)
		}()
	}
	wg.Wait()
}

// dropGiven leaves out of the watched values of each rank those of the
// warnings given, unless the tensor's other statistic (max for min, min
// for max) is watched on some rank and not given: which of the two is
// shown is decided from both.
func dropGiven(vals [][]ahead.Value, given func(op, tensor, stat string) bool) {
	watched := map[ahead.Key]bool{}
	for _, vs := range vals {
		for _, v := range vs {
			watched[v.Key] = true
		}
	}
	drop := func(k ahead.Key) bool {
		if !given(k.Op, k.Tensor, k.Stat) {
			return false
		}
		other := k
		other.Stat = map[string]string{"max": "min", "min": "max"}[k.Stat]
		return given(other.Op, other.Tensor, other.Stat) || !watched[other]
	}
	for i, vs := range vals {
		vals[i] = slices.DeleteFunc(vs, func(v ahead.Value) bool { return drop(v.Key) })
	}
}

// rankAhead is one rank's series: rd are its files up to the step judged,
// oldest first, vals the values watched in the last of them, and m the
// rule set's matcher the values of the steps before are read with.
func rankAhead(ctx context.Context, rank int, rd []dump.RankDir, vals []ahead.Value, m *policy.Matcher) []ahead.Series {
	if len(vals) == 0 {
		return nil
	}
	last := rd[len(rd)-1]
	want := map[string]bool{}
	for _, v := range vals {
		want[v.Op] = true
	}
	values := map[int][]ahead.Value{last.Step: vals}
	steps := []int{last.Step}
	for i := len(rd) - 2; i >= 0 && len(steps) < policy.AheadShown; i-- {
		got, err := valuesOf(ctx, rd[i].Dump, want, m)
		if err != nil {
			break // the series starts after a file it cannot read
		}
		values[rd[i].Step] = got
		steps = append(steps, rd[i].Step)
	}
	slices.Reverse(steps)
	return ahead.Build(rank, steps, values)
}

// watchedValues are the values of a file close enough to their limits to
// be watched: the entries that hold a large Max or Min, or are calls of
// the exp family, are found by the byte search and parsed one by one.
func watchedValues(ctx context.Context, file string, m *policy.Matcher) ([]ahead.Value, error) {
	x := entryat.New(dump.ReaderOptions{Details: true})
	var out []ahead.Value
	observe := func(e *dump.Entry) {
		for _, v := range ahead.Observe(e, m.AheadCounts(e), nil) {
			if v.Watched() {
				out = append(out, v)
			}
		}
	}
	parse := func(at int64, raw []byte) error {
		e, err := x.Parse(raw, at)
		if err != nil {
			return fmt.Errorf("entry at byte %d: %w", at, err)
		}
		observe(e)
		return nil
	}
	starts, lost, size, err := aheadEntries(ctx, file, parse)
	if err != nil {
		return nil, err
	}
	if len(lost) > 0 {
		// a value whose entry began a window earlier: the reader finds it
		slices.Sort(lost)
		more, err := entriesHolding(file, lost)
		if err != nil {
			return nil, err
		}
		for _, r := range more {
			starts = append(starts, r[0])
		}
		slices.Sort(starts)
		starts = slices.Compact(starts)
	}
	if len(starts) == 0 {
		return out, nil
	}
	f, err := safeio.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	for _, at := range starts {
		// the entry is the first of what follows: only it is parsed
		e, err := x.Read(f, at, size)
		if err != nil {
			return nil, fmt.Errorf("entry at byte %d: %w", at, err)
		}
		observe(e)
	}
	return out, nil
}

// aheadWindow is the read window of the byte search for watched values;
// aheadEdge the bytes at each edge of a window that the next or the
// previous window judges (each find needs fewer bytes of context).
const (
	aheadWindow = 256 << 10
	aheadEdge   = 256
)

// aheadBuf is one search's window and finds; aheadBufs keeps them for the
// next file (a watch searches every rank's file of every step it checks).
type aheadBuf struct {
	data  []byte
	finds bytesearch.AheadFinds
}

var aheadBufs = sync.Pool{New: func() any { return &aheadBuf{data: make([]byte, aheadWindow+2*aheadEdge)} }}

// aheadWindowFor is the window the search reads through: aheadWindow, or
// less (tests, so that small documents cross its edges; at least
// 2*aheadEdge).
var aheadWindowFor = aheadWindow

// expLook is how much of an exp-family entry expUnwatched reads: its name,
// its first input tensor and the start of its output.
const expLook = 4096

// aheadEntries searches a file window by window (bytesearch.FindAhead)
// for the entries (their names' quotes) that hold what it finds. An entry
// whose bytes lie in the window is handed to parse at once; it returns the
// offsets of the others (their value ends in a later window), the offsets
// of the finds whose entry began in an earlier window (lost), and the
// file's size. A file that is not json.dump(indent) output has every find
// lost.
func aheadEntries(ctx context.Context, file string, parse func(at int64, raw []byte) error) (starts, lost []int64, size int64, err error) {
	f, err := safeio.Open(file)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	rules := policy.AheadSearchRules()
	br := bytesearch.AheadRules{IntDigits: rules.IntDigits, Exponent: rules.Exponent, APIs: rules.ExpAPIs}
	pooled := aheadBufs.Get().(*aheadBuf)
	defer aheadBufs.Put(pooled)
	buf, finds := pooled.data[:aheadWindowFor+2*aheadEdge], &pooled.finds
	var entryLine, closeLine []byte
	base, kept := int64(0), 0          // file offset of buf[0]; bytes carried in front
	entry, seen := int64(-1), int64(0) // the entry of the last number found, and where it was
	handled := int64(-1)               // the last entry handed to parse or kept
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, 0, err
		}
		n, err := io.ReadFull(f, buf[kept:])
		n += kept
		end := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !end {
			return nil, nil, 0, err
		}
		if base == 0 {
			if indent := bytesearch.DocumentIndent(buf[:n]); indent > 0 {
				entryLine = bytesearch.EntryLine(nil, indent, '"')
				closeLine = bytesearch.EntryLine(nil, indent, '}')
			}
		}
		lo, hi := 0, n
		if base > 0 {
			lo = aheadEdge
		}
		if !end {
			hi = n - aheadEdge
		}
		finds.Numbers, finds.Names = finds.Numbers[:0], finds.Names[:0]
		bytesearch.FindAhead(buf[:n], br, finds)
		var found []int64
		holdsNumber := map[int64]bool{} // entries found by a large number, not only by their name
		for _, o := range finds.Names {
			switch {
			case o < lo || o >= hi:
			case entryLine == nil:
				lost = append(lost, base+int64(o)) // another layout: the reader finds its entry
			case o+1 >= len(entryLine) && string(buf[o+1-len(entryLine):o+1]) == string(entryLine):
				found = append(found, base+int64(o))
			}
		}
		for _, o := range finds.Numbers {
			if o < lo || o >= hi {
				continue
			}
			// only the bytes after the last find looked at are searched
			// (and a line that may end there)
			from := min(o, max(0, int(seen-base)-lineBack(entryLine)))
			if i := lastIndex(buf[from:o], entryLine); i >= 0 {
				entry = base + int64(from+i+len(entryLine)-1)
			}
			seen = base + int64(o)
			if entry >= 0 {
				found = append(found, entry)
				holdsNumber[entry] = true
			} else {
				lost = append(lost, base+int64(o))
			}
		}
		slices.Sort(found)
		for _, at := range slices.Compact(found) {
			if at <= handled {
				continue
			}
			if rel := int(at - base); rel >= 0 && closeLine != nil {
				if !holdsNumber[at] && expUnwatched(buf[rel:min(n, rel+expLook)]) {
					// a call of the exp family whose input is far from its
					// limit: not handled, so that a large number found in it
					// later (in the next window) still brings it
					continue
				}
				handled = at
				if c := bytes.Index(buf[rel:n], closeLine); c >= 0 {
					raw := buf[rel : rel+c+len(closeLine)]
					if err := parse(at, raw); err != nil {
						return nil, nil, 0, err
					}
					continue
				}
			}
			handled = at
			starts = append(starts, at)
		}
		if end {
			size = base + int64(n)
			break
		}
		// the entry lines after the last number looked at: a number in
		// the next window may lie in their entry
		if from := max(0, int(seen-base)-lineBack(entryLine)); from < hi {
			if i := lastIndex(buf[from:hi], entryLine); i >= 0 {
				entry = base + int64(from+i+len(entryLine)-1)
			}
			seen = base + int64(hi)
		}
		kept = 2 * aheadEdge
		copy(buf, buf[n-kept:n])
		base += int64(n - kept)
	}
	return starts, lost, size, nil
}

// lineBack is how far before the bytes not searched yet an entry line
// that ends in them may begin.
func lineBack(entryLine []byte) int { return max(0, len(entryLine)-1) }

// lastIndex is bytes.LastIndex, -1 for an empty needle.
func lastIndex(b, needle []byte) int {
	if len(needle) == 0 {
		return -1
	}
	return bytes.LastIndex(b, needle)
}

// entriesHolding are the byte ranges of the entries of a file that hold
// the given offsets (sorted), from one pass of the reader that skips every
// entry's value.
func entriesHolding(file string, offsets []int64) ([][2]int64, error) {
	f, indent, err := openIndented(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd := dump.NewReader(f, dump.ReaderOptions{Indent: indent, Select: func(string, int64) bool { return false }})
	var out [][2]int64
	i := 0
	for i < len(offsets) && rd.Next() {
		e := rd.Entry()
		for i < len(offsets) && offsets[i] < e.Offset {
			i++ // outside any entry (the header)
		}
		if i < len(offsets) && offsets[i] < e.End {
			out = append(out, [2]int64{e.Offset, e.End})
			for i < len(offsets) && offsets[i] < e.End {
				i++
			}
		}
	}
	if err := rd.Err(); err != nil {
		return out, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// valuesOf are the values of the entries named in want, from one pass of
// the reader that parses only those.
func valuesOf(ctx context.Context, file string, want map[string]bool, m *policy.Matcher) ([]ahead.Value, error) {
	f, indent, err := openIndented(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd := dump.NewReader(f, dump.ReaderOptions{Details: true, Indent: indent,
		Select: func(name string, _ int64) bool { return want[name] }})
	var out []ahead.Value
	for rd.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e := rd.Entry(); !e.Skipped {
			out = ahead.Observe(e, m.AheadCounts(e), out)
		}
	}
	if err := rd.Err(); err != nil {
		return out, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// openIndented opens a dump.json and reads from its first bytes the
// indentation json.dump(indent) gave it (0: another layout), for a reader
// that passes skipped entries over to their closing lines.
func openIndented(file string) (*os.File, int, error) {
	f, err := safeio.Open(file)
	if err != nil {
		return nil, 0, err
	}
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, bytesearch.DocumentIndent(head[:n]), nil
}
