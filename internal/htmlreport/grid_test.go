package htmlreport

import (
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"
)

// decode expands a column's cells to one code per rank.
func decode(col GridCol, n int) string {
	if len(col.Cells) == 1 {
		return strings.Repeat(col.Cells, n)
	}
	return col.Cells
}

func TestHTMLGridColumns(t *testing.T) {
	v := readVerdict(t, "verdict_bwd-sqrt-zero-L1.json")
	g := buildGrid(v)
	var labels []string
	for _, c := range g.Cols {
		labels = append(labels, c.Label)
	}
	want := []string{"0", "1", "2", "3", "4", "5 born", "5 #1 all_reduce.1", "6", "7"}
	if !slices.Equal(labels, want) {
		t.Fatalf("columns %q, want %q", labels, want)
	}
	if !slices.Equal(g.Ranks, []int{0, 1, 2, 3}) || len(g.Groups) != 1 || g.Bucket != 1 {
		t.Errorf("ranks %v groups %v bucket %d", g.Ranks, g.Groups, g.Bucket)
	}
	for i, c := range []struct{ cells, roles string }{
		{"cccc", ""}, {"cccc", ""}, {"cccc", ""}, {"cccc", ""}, {"cccc", ""},
		{"ccic", "..s."},
		{"nnin", "rrsr"},
		{"kkkk", ""}, // step 6 was read until it showed that the anomaly lasts
		{"uuuu", ""}, // step 7 was not read
	} {
		col := g.Cols[i]
		if got := decode(col, 4); got != c.cells || col.Roles != c.roles {
			t.Errorf("column %s: cells %q roles %q, want %q %q", col.Label, got, col.Roles, c.cells, c.roles)
		}
	}
	if !g.Cols[6].Carrier || g.Cols[5].Carrier {
		t.Errorf("the carrier column is not the all_reduce")
	}
	if g.Cols[0].Cells != "c" {
		t.Errorf("a uniform column is written in full: %q", g.Cols[0].Cells)
	}
}

func TestHTMLGridGroups(t *testing.T) {
	v := readVerdict(t, "verdict_sendrecv-carrier.json")
	g := buildGrid(v)
	var labels []string
	for _, gr := range g.Groups {
		labels = append(labels, gr.Label)
	}
	if want := []string{"group 0,1", "group 2,3", "group 4,5", "group 6,7"}; !slices.Equal(labels, want) {
		t.Errorf("groups %q, want %q", labels, want)
	}
	// a receiver is marked in the column of the call that reached it only
	for _, c := range g.Cols {
		if c.Phase == "send.0" && c.Roles != "..s.r.r." {
			t.Errorf("send.0 roles %q", c.Roles)
		}
	}
}

func TestHTMLGridStates(t *testing.T) {
	v := syntheticVerdict(1024, 100)
	g := buildGrid(v)
	// 8 data-parallel groups of 127 and the carrier's group of 8: 33 rows
	if g.Bucket != 32 {
		t.Errorf("bucket %d for 1,024 ranks, want 32", g.Bucket)
	}
	// 100 steps, the origin step split into born, the carrier and the
	// data-parallel all_reduces
	if len(g.Cols) != 102 {
		t.Errorf("%d columns, want 102", len(g.Cols))
	}
	if len(g.Groups) != 9 || g.Groups[0].Label != "group 0,8,16,24,… (127)" || g.Groups[8].Label != "group 512-519" {
		t.Errorf("groups %+v", g.Groups)
	}
	count := func(col GridCol, code byte) int {
		return strings.Count(decode(col, len(g.Ranks)), string(rune(code)))
	}
	if c := g.Cols[1]; count(c, cellNotDumped) != 2 {
		t.Errorf("step 1: %d ranks not dumped, want 2", count(c, cellNotDumped))
	}
	if c := g.Cols[2]; count(c, cellDamaged) != 1 {
		t.Errorf("step 2: %d damaged ranks, want 1", count(c, cellDamaged))
	}
	if c := g.Cols[48]; c.Status != "recovered" || count(c, cellPosInf) != 1 {
		t.Errorf("step 48: %s with %d +inf ranks", c.Status, count(c, cellPosInf))
	}
	last := g.Cols[len(g.Cols)-1]
	if last.Status != "not_scanned" || last.Cells != "u" {
		t.Errorf("last column %+v", last)
	}
}

func TestHTMLGridWithoutSteps(t *testing.T) {
	v := readVerdict(t, "verdict_bwd-sqrt-zero-L1.json")
	v.Steps = nil
	g := buildGrid(v)
	if len(g.Cols) == 0 {
		t.Fatal("no columns from a verdict without steps")
	}
	var born *GridCol
	for i := range g.Cols {
		if g.Cols[i].Phase == "born" {
			born = &g.Cols[i]
		}
	}
	if born == nil || born.Roles != "..s." {
		t.Errorf("the candidates did not give the birth column: %+v", born)
	}
	g = buildGrid(&verdict.Verdict{})
	if len(g.Cols) != 0 || len(g.Ranks) != 0 {
		t.Errorf("an empty verdict drew %+v", g)
	}
}

// In a hop's column, a rank that received the value at an earlier hop and
// sends it on is marked as a sender, not as a receiver.
func TestHTMLGridRelay(t *testing.T) {
	v := readVerdict(t, "verdict_bwd-sqrt-zero-L1.json")
	v.Carrier = nil
	v.Spread = []verdict.Hop{
		{Step: 5, Op: "Distributed.send.0.forward", FromRanks: []int{2}, ToRanks: []int{1}},
		{Step: 5, Op: "Distributed.all_reduce.1.forward", FromRanks: []int{1}, ToRanks: []int{0, 3}},
	}
	g := buildGrid(v)
	roles := map[string]string{}
	for _, c := range g.Cols {
		roles[c.Label] = c.Roles
	}
	for label, want := range map[string]string{"5 #1 send.0": ".rs.", "5 #2 all_reduce.1": "rtsr"} {
		if roles[label] != want {
			t.Errorf("column %q: roles %q, want %q (all: %v)", label, roles[label], want, roles)
		}
	}
}
