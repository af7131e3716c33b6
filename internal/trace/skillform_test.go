package trace

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/verdict"
)

// The run of testdata/make_skill_format.py, written once in the format the
// nan-overflow-detection skill documents and once as msprobe writes it:
// both give the same verdict, names aside, and only the first warns.

func TestSkillFormatDump(t *testing.T) {
	skill := runDir(t, filepath.Join("testdata", "skill-format"))
	o := skill.Origin
	if o == nil || o.Step != 1 || !slices.Equal(o.Ranks, []int{1}) || o.Op != "Torch.ops.aten.log_0_0" ||
		o.Kind != "nan" || o.Stage != "forward" || !o.Captured || o.Tie {
		t.Fatalf("origin = %+v, want rank 1's Torch.ops.aten.log_0_0 at step 1, a captured NaN in the forward", o)
	}
	if o.Code == nil || o.Code.File != "model.py" || o.Code.Line != 24 || o.Code.Func != "forward" {
		t.Errorf("code = %+v, want model.py:24 in forward (stack.json as [function, file, line])", o.Code)
	}
	if c := skill.Carrier; c == nil || c.Op != "Distributed.all_reduce_0_0" || !slices.Equal(c.FromRanks, []int{1}) || !slices.Equal(c.ToRanks, []int{0, 2, 3}) {
		t.Errorf("carrier = %+v, want Distributed.all_reduce_0_0 from 1 to 0,2,3", skill.Carrier)
	}

	dumps, stacks := formWarnings(skill)
	// step 0 is cleared by the byte search, unparsed; step 1 is read on every rank
	var want []string
	for r := range 4 {
		want = append(want, filepath.Join("testdata", "skill-format", "step1", fmt.Sprintf("rank%d", r), "dump.json"))
	}
	if !slices.Equal(dumps, want) {
		t.Errorf("dump.json warnings for %v, want one for each of %v", dumps, want)
	}
	if want := []string{filepath.Join("testdata", "skill-format", "step1", "rank1", "stack.json")}; !slices.Equal(stacks, want) {
		t.Errorf("stack.json warnings for %v, want %v (the origin rank's, read for its code line)", stacks, want)
	}
	for _, w := range skill.Warnings {
		if strings.HasSuffix(w.File, "dump.json") && !strings.Contains(w.Message, `real msprobe writes "Torch.nn.functional.linear.0.forward" and lists`) {
			t.Errorf("%s: %q does not say what msprobe writes", w.File, w.Message)
		}
	}

	real := runDir(t, filepath.Join("testdata", "skill-format-msprobe"))
	if d, s := formWarnings(real); len(d)+len(s) != 0 {
		t.Errorf("msprobe's own format warned for %v %v", d, s)
	}
	if got, want := dotted(skill), dotted(real); got != want {
		t.Errorf("the skill's format gives\n%s\nmsprobe's gives\n%s", got, want)
	}
}

func runDir(t *testing.T, dir string) *verdict.Verdict {
	t.Helper()
	v, err := Run(context.Background(), Options{Path: dir, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// formWarnings lists the files warned of as written in the skill's format.
func formWarnings(v *verdict.Verdict) (dumps, stacks []string) {
	for _, w := range v.Warnings {
		if !strings.HasPrefix(w.Message, "written in the format the nan-overflow-detection skill documents") {
			continue
		}
		if filepath.Base(w.File) == "stack.json" {
			stacks = append(stacks, w.File)
		} else {
			dumps = append(dumps, w.File)
		}
	}
	slices.Sort(dumps)
	return dumps, stacks
}

// dotted is the verdict's origin, carrier and ranks with entry names as
// msprobe writes them.
func dotted(v *verdict.Verdict) string {
	name := func(s string) string {
		if n := dump.ParseName(s); n.UnderscoreCounters {
			return dottedName(n)
		}
		return s
	}
	var b strings.Builder
	o := v.Origin
	if o != nil {
		b.WriteString(strings.Join([]string{name(o.Op), o.Kind, o.Stage, o.Phase, o.Confidence}, " "))
		if o.Code != nil {
			fmt.Fprintf(&b, " %s:%d", o.Code.File, o.Code.Line)
		}
		for _, ts := range append(append([]verdict.TensorStat{}, o.Inputs...), o.Outputs...) {
			b.WriteString(" " + ts.Slot + "=" + ts.Holds)
		}
	}
	for _, h := range v.Spread {
		b.WriteString("\nhop " + name(h.Op) + " " + notation.FormatRanges(h.FromRanks) + ">" + notation.FormatRanges(h.ToRanks))
	}
	for _, c := range v.Candidates {
		fmt.Fprintf(&b, "\n%s %d %s %s %s", c.Role, c.Rank, name(c.Op), c.Phase, c.Kind)
	}
	for _, s := range v.Steps {
		b.WriteString("\nstep " + s.Status + " " + s.Ranks)
		for _, a := range s.Anomalous {
			b.WriteString(" " + a.Role + ":" + name(a.Op) + ":" + name(a.Via))
		}
	}
	return b.String()
}
