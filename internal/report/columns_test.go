package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestTextTable(t *testing.T) {
	var c textTable
	c.indent = "  "
	c.add("ranks 0-2,4-6,8-31", "MyKern.fusion_attention_grad_with_a_long_name.3.forward", "backward", "nan", "origin")
	c.add("rank 3", "Torch.sqrt.0.backward", "backward", "inf", "received")
	c.add("... 2 more")
	want := []string{
		"  ranks 0-2,4-6,8-31  MyKern.fusion_attention_grad_with_a_long_name.3.forward  backward  nan  origin",
		"  rank 3              Torch.sqrt.0.backward                                    backward  inf  received",
		"  ... 2 more",
	}
	got := c.lines()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The ranks table of a long run keeps its columns whatever the lengths of
// rank lists and op names: every stage starts in the same column.
func TestRanksTableColumns(t *testing.T) {
	v := readVerdict(t, "testdata/markdown_bwd-sqrt-zero-L1.json")
	long := "MyKern.fusion_attention_grad_" + strings.Repeat("x", 40) + ".3.forward"
	for i := range v.Candidates {
		if i == 0 {
			v.Candidates[i].Op = long
		}
		v.Candidates[i].Rank = 100 + 7*i // spread ranks: long range lists
	}
	var b bytes.Buffer
	if err := Text(&b, v); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	block := out[strings.Index(out, "Ranks at step"):]
	block = block[:strings.Index(block, "\n\n")]
	col := -1
	for _, l := range strings.Split(block, "\n")[1:] {
		i := strings.Index(l, "  backward  ")
		if i < 0 {
			i = strings.Index(l, "  forward  ")
		}
		if i < 0 {
			t.Fatalf("no stage in %q", l)
		}
		if col >= 0 && i != col {
			t.Errorf("stage at column %d, want %d:\n%s", i, col, block)
		}
		col = i
	}
	if !strings.Contains(block, long) {
		t.Errorf("the long op name is cut:\n%s", block)
	}
}
