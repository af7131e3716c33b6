package htmlreport

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/trace"
)

// fixtures returns ../shared/fixtures next to the repository, or skips.
func fixtures(t *testing.T) string { return fixturedir.Dir(t) }

func traceDump(t *testing.T, path string) *verdict.Verdict {
	t.Helper()
	v, err := trace.Run(context.Background(), trace.Options{Path: path, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type callWant struct {
	index int
	op    string
	role  string
}

func checkCalls(t *testing.T, tl *Timeline, want []callWant) {
	t.Helper()
	if len(tl.Calls) != len(want) {
		for _, c := range tl.Calls {
			t.Logf("  %d %s %s", c.Index, c.Op, c.Role)
		}
		t.Fatalf("%d calls, want %d", len(tl.Calls), len(want))
	}
	for i, w := range want {
		c := tl.Calls[i]
		if c.Index != w.index || c.Op != w.op || c.Role != w.role {
			t.Errorf("call %d: %d %s %s, want %d %s %s", i, c.Index, c.Op, c.Role, w.index, w.op, w.role)
		}
	}
}

// The calls the analysis read from the origin rank's dump.json, as the
// page shows them: the gaps between them, the name's direction next to the
// phase, and a note for each.
func TestHTMLTimelineFromDump(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	v := traceDump(t, dir)
	tl := buildTimeline(v)
	if tl.From != "dump" || tl.Step != 5 || tl.Rank != 2 || len(tl.Warnings) != 0 || tl.File != string(v.Origin.Timeline.File) {
		t.Fatalf("timeline from %s, step %d rank %d, warnings %q", tl.From, tl.Step, tl.Rank, tl.Warnings)
	}
	checkCalls(t, tl, []callWant{
		{73, "Functional.layer_norm.0.backward", "clean"},
		{74, "Tensor.__add__.0.backward", "clean"},
		{75, "Functional.linear.1.backward", "clean"},
		{76, "Functional.pad.0.backward", "clean"},
		{77, "Torch.sqrt.0.backward", "root"},
		{78, "Tensor.sum.0.backward", "chain"},
		{79, "Tensor.__mul__.1.backward", "first_nan"},
		{83, "Distributed.all_reduce.1.forward", "carrier"},
	})
	root := tl.Calls[4]
	if root.Holds != "+inf" || len(root.Inputs) == 0 || root.Gap != 0 || root.Note != "origin: finite inputs, Inf out" {
		t.Errorf("root call %+v", root)
	}
	if tl.Calls[0].Gap != 73 || tl.Calls[7].Gap != 3 {
		t.Errorf("gaps %d and %d, want 73 and 3", tl.Calls[0].Gap, tl.Calls[7].Gap)
	}
	if tl.Calls[7].Phase != "gradient reduction" || tl.Calls[7].Dir != "forward" || tl.Calls[5].Note != "holds +inf" {
		t.Errorf("carrier %q (dir %q), chain note %q", tl.Calls[7].Phase, tl.Calls[7].Dir, tl.Calls[5].Note)
	}
	page := render(t, v, Options{})
	for _, want := range []string{"Origin timeline", "Tensor.sum.0.backward", "the Inf became NaN here", "… 73 calls not shown …", `title="dump">` + dir + "<"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// A verdict whose analysis could not read the calls says why, and the page
// shows the verdict's own record with that warning; a verdict of revision
// 1, which holds no timeline, shows that record without one.
func TestHTMLTimelineUnread(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	v := traceDump(t, dir)
	v.Origin.Timeline = &verdict.Timeline{Rank: 2, Calls: []verdict.TimelineCall{}, Unread: "x/dump.json ends before Torch.sqrt.0.backward (cut)"}
	tl := buildTimeline(v)
	if tl.From != "verdict" || len(tl.Warnings) != 1 || tl.Warnings[0] != "origin timeline: x/dump.json ends before Torch.sqrt.0.backward (cut); the timeline below is the verdict's own record" {
		t.Fatalf("from %s, warnings %q", tl.From, tl.Warnings)
	}
	checkCalls(t, tl, []callWant{
		{77, "Torch.sqrt.0.backward", "root"},
		{79, "Tensor.__mul__.1.backward", "first_nan"},
		{-1, "Distributed.all_reduce.1.forward", "carrier"}, // its index on rank 2 is not in the verdict
	})
	if page := render(t, v, Options{}); !strings.Contains(page, "the timeline below is the verdict") {
		t.Errorf("the page does not say where its timeline came from")
	}

	old := readVerdict(t, "verdict_bwd-sqrt-zero-L1.json")
	if old.SchemaRevision != 0 || old.Origin.Timeline != nil {
		t.Fatalf("testdata changed: revision %d", old.SchemaRevision)
	}
	if tl := buildTimeline(old); tl.From != "verdict" || len(tl.Warnings) != 0 || len(tl.Calls) == 0 {
		t.Errorf("a verdict of revision 1: from %s, warnings %q, calls %+v", tl.From, tl.Warnings, tl.Calls)
	}
}

func TestHTMLTimelineFromVerdict(t *testing.T) {
	v := readVerdict(t, "verdict_optimizer-nan-fused.json")
	tl := buildTimeline(v)
	if tl.From != "verdict" || len(tl.Calls) == 0 || tl.Calls[len(tl.Calls)-1].Role != "root" {
		t.Fatalf("timeline %+v", tl)
	}
	if !strings.Contains(tl.Calls[len(tl.Calls)-1].Note, "first call that shows it") {
		t.Errorf("an uncaptured root is called %q", tl.Calls[len(tl.Calls)-1].Note)
	}
	if tl := buildTimeline(readVerdict(t, "verdict_resnet-clean.json")); tl != nil {
		t.Errorf("a clean verdict has a timeline")
	}
}
