package policy

import (
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/bytesearch"
)

// planDoc is a json.dump(indent=1) document of three entries: a forward
// call (the suspect of maskHits lies in it), a backward entry (its name's
// quote at offset backwardAt) and the forward call of the update.
const planDoc = "{\n \"data\": {\n  \"Torch.mul.0.forward\": {\n   \"input_args\": [],\n   \"input_kwargs\": {},\n" +
	"   \"output\": [],\n   \"is_recompute\": false,\n   \"data_name\": null\n  },\n  \"Torch.mul.0.backward\": {},\n  \"Tensor.add_.0.forward\": {}\n }\n}\n"

// maskHits is the byte search of a whole, indented file with statistics
// whose one suspect, at offset 150, is -inf in a forward API call whose
// entry starts at 100; f changes it.
func maskHits(f func(*bytesearch.Hits)) *bytesearch.Hits {
	x := &bytesearch.Hits{Whole: true, Located: true, Forward: true, Indent: 1, FirstSevere: -1, LastEntry: 100, Tensors: 1, Stats: 1,
		Spans: []bytesearch.Span{{From: 150, To: 150}}}
	f(x)
	return x
}

var backwardAt = int64(strings.Index(planDoc, `"Torch.mul.0.backward"`))

func TestPlanFile(t *testing.T) {
	if backwardAt <= 150 {
		t.Fatalf("the backward entry of planDoc starts at %d, before the suspect of maskHits", backwardAt)
	}
	h := maskHits
	for _, tc := range []struct {
		name string
		h    *bytesearch.Hits
		want Read
	}{
		{"no suspect", h(func(x *bytesearch.Hits) { x.Spans = nil }), Clear},
		{"masks before the last backward entry", h(func(*bytesearch.Hits) {}), ClearMasks},
		{"masks, no backward name in the file", h(func(x *bytesearch.Hits) { x.NoBackward = true }), ClearMasks},
		{"a mask after the last backward entry", h(func(x *bytesearch.Hits) { x.LastEntry = backwardAt + 30 }), Walk},
		{"a NaN or +inf suspect", h(func(x *bytesearch.Hits) { x.FirstSevere = 150 }), Walk},
		{"a suspect in a module or a collective", h(func(x *bytesearch.Hits) { x.Forward = false }), Walk},
		{"searched up to its first severe suspect", h(func(x *bytesearch.Hits) { x.Whole, x.Partial, x.FirstSevere = false, true, 150 }), Walk},
		{"cut by a crash", h(func(x *bytesearch.Hits) { x.Whole = false }), ReadAll},
		{"tensors without statistics", h(func(x *bytesearch.Hits) { x.Stats = 0 }), ReadAll},
		{"no suspect, no tensor (maybe no entry)", h(func(x *bytesearch.Hits) { x.Spans, x.Tensors, x.Stats = nil, 0, 0 }), Walk},
	} {
		for _, probe := range []int64{0, 1, BackwardProbe} {
			if got := PlanFile(tc.h, strings.NewReader(planDoc), int64(len(planDoc)), probe); got != tc.want {
				t.Errorf("%s (probe %d): %v, want %v", tc.name, probe, got, tc.want)
			}
		}
	}
}

// An EntryWalk, asked about the entries of a file in order: which it parses
// before their bytes are read, and what each one it passed over needs.
func TestEntryWalk(t *testing.T) {
	type entry struct {
		name      string
		from, to  int64
		parse     bool
		skip      Skip // when not parsed, before the walk is settled
		settleNow bool // settle the walk after this entry
	}
	hits := &bytesearch.Hits{FirstSevere: 5000, Spans: []bytesearch.Span{{From: 150, To: 160}, {From: 5000, To: 5010}, {From: 20000, To: 20000}}}
	for _, tc := range []struct {
		name    string
		entries []entry
	}{
		{"mask region", []entry{
			{name: "Torch.mul.0.forward", from: 0, to: 100, skip: SkipClean},
			{name: "Tensor.masked_fill.0.forward", from: 100, to: 200, skip: SkipMask},
			{name: "Distributed.all_reduce.0.forward", from: 200, to: 300, parse: true},
			{name: "Module.attn.Attention.forward.0", from: 300, to: 400, skip: SkipClean},
			{name: "Tensor.masked_fill.1.forward", from: 4000, to: 4500, skip: SkipClean},
		}},
		{"a module's suspect is parsed", []entry{
			{name: "Module.attn.Attention.forward.0", from: 120, to: 200, parse: true},
		}},
		{"the entry holding the first severe suspect", []entry{
			{name: "Torch.log.0.forward", from: 4990, to: 5100, skip: SkipParse},
		}},
		{"past the first severe suspect", []entry{
			{name: "Torch.mul.1.forward", from: 8000, to: 8900, skip: SkipClean},
			{name: "Torch.mul.2.forward", from: 19950, to: 20100, parse: true},
		}},
		{"a suspect the choice before reading missed", []entry{
			{name: "Torch.mul.1.forward", from: 6000, to: 20100, skip: SkipParse},
		}},
		{"settled: collectives only", []entry{
			{name: "Torch.log.0.forward", from: 4990, to: 5100, skip: SkipParse, settleNow: true},
			{name: "Torch.mul.2.forward", from: 19950, to: 20100},
			{name: "Distributed.all_reduce.0.forward", from: 20100, to: 20200, parse: true},
		}},
	} {
		w := NewEntryWalk(hits)
		for _, e := range tc.entries {
			if got := w.Parse(e.name, e.from); got != e.parse {
				t.Errorf("%s: %s: parsed %v, want %v", tc.name, e.name, got, e.parse)
				continue
			}
			if !e.parse && !w.Settled() { // (a settled walk's caller asks nothing more)
				if got := w.Skipped(e.from, e.to); got != e.skip {
					t.Errorf("%s: %s: skipped as %d, want %d", tc.name, e.name, got, e.skip)
				}
			}
			if e.settleNow {
				w.Settle()
			}
		}
		if settled := tc.entries[0].settleNow; w.Settled() != settled {
			t.Errorf("%s: settled %v, want %v", tc.name, w.Settled(), settled)
		}
	}
}
