package trace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/cases"
	"github.com/nanhunt/nanhunt/verdict"
)

// Tensors and arguments of the dumps the tests below write in code (the
// hand-written cases are files: internal/cases/testdata/cases).
const (
	tensorFinite = `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 1.5, "Min": -0.5, "Mean": 0.1, "Norm": 2.0, "requires_grad": true}`
	tensorNaN    = `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": NaN, "Min": NaN, "Mean": NaN, "Norm": NaN, "requires_grad": true}`
	tensorNegInf = `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 0.5, "Min": -Infinity, "Mean": -Infinity, "Norm": Infinity, "requires_grad": false}`
	floatNegInf  = `{"type": "float", "value": -Infinity}`
)

// call is one dump.json entry: a forward call's input_args (a backward
// one's input), its output, and the members of input_kwargs, if any.
func call(name string, inputs, outputs []string, kwargs ...string) string {
	in := `"input_args": [` + strings.Join(inputs, ", ") + `]`
	if strings.HasSuffix(name, ".backward") {
		in = `"input": [` + strings.Join(inputs, ", ") + `]`
	}
	body := in + `, "output": [` + strings.Join(outputs, ", ") + `]`
	if !strings.HasSuffix(name, ".backward") {
		body += `, "input_kwargs": {` + strings.Join(kwargs, ", ") + `}`
	}
	return fmt.Sprintf("%q: {%s}", name, body)
}

// groupKw is a "group" keyword argument: the group of these ranks, with
// an id of its own.
func groupKw(ranks ...int) string {
	ids := strings.Fields(strings.Trim(fmt.Sprint(ranks), "[]"))
	return fmt.Sprintf(`"group": {"type": "torch.ProcessGroup", "group_ranks": [%s], "group_id": "g%s"}`, strings.Join(ids, ", "), strings.Join(ids, "_"))
}

func list(xs ...string) []string { return xs }

// layDump writes step -> rank -> entries as msprobe lays out a dump and
// returns dump_path.
func layDump(t *testing.T, steps map[int]map[int][]string) string {
	t.Helper()
	c := &cases.Case{Name: "written in code"}
	for step, ranks := range steps {
		for rank, entries := range ranks {
			doc := `{"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {` + strings.Join(entries, ", ") + "}}"
			c.Files = append(c.Files, cases.File{Path: fmt.Sprintf("step%d/rank%d/dump.json", step, rank), Text: doc})
		}
	}
	root, err := c.Lay(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// layCase writes one of the hand-written cases and returns its path.
func layCase(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "cases", "testdata", "cases", filepath.FromSlash(name)+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cases.Parse(name, b)
	if err != nil {
		t.Fatal(err)
	}
	root, err := c.Lay(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func runOn(t *testing.T, root string) *verdict.Verdict {
	t.Helper()
	v, err := Run(context.Background(), Options{Path: root})
	if err != nil {
		t.Fatal(err)
	}
	return v
}
