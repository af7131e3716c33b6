package export

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
)

// writtenRows are the rows the export hands the file writer for one
// dump.json: the dump read again with the export's own row building, no
// file reader involved.
func writtenRows(t testing.TB, path string, step, rank int) []Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := dump.NewReader(f, dump.ReaderOptions{Details: true})
	b := newBatch() // never reset: its pointers stay valid however many rows
	for rd.Next() {
		e := rd.Entry()
		ei := entryOf(step, rank, e)
		for i := range e.Tensors {
			b.add(&ei, &e.Tensors[i])
		}
	}
	return b.rows
}

// cells is a row's values in the order of Columns, as jsread.SameCell
// takes them.
func cells(r *Row) []any {
	c := []any{r.Step, r.Rank, r.EntryIndex, r.EntryName, r.API, r.Direction, r.Module,
		r.Field, r.Slot, r.Dtype, nil, nil, nil, nil, nil, nil, r.Nonfinite, r.RequiresGrad}
	if r.Shape != nil {
		c[10] = r.Shape
	}
	if r.Numel != nil {
		c[11] = *r.Numel
	}
	for i, v := range [4]*float64{r.Max, r.Min, r.Mean, r.Norm} {
		if v != nil {
			c[12+i] = *v
		}
	}
	return c
}

// oddNames are entry names, dtypes and keyword names a CSV, JSON or
// spreadsheet reader could mangle.
var oddNames = []string{
	`Torch.odd,comma.0.forward`, `Torch.say "hi".0.forward`, "Torch.line\nbreak.0.backward",
	"Torch.cr\r\nlf.0.forward", "Torch.tab\there.1.forward", `Torch.back\slash.0.forward`,
	"=HYPERLINK(\"x\").0.forward", "\ufeffTorch.bom.0.forward", "Torch.\u00e9\u4e2d\U0001F600.0.forward",
	" Torch.leading space.0.forward", "Module.a,b.C.forward.0",
}

// writeOddDump writes dump/step3/rank1/dump.json with the names of
// oddNames and every kind of statistic: numbers, NaN, Infinity,
// -Infinity, -0, null, booleans, absent ones, empty, absent and large
// shapes, odd keyword names and dtypes. It returns the dump folder.
func writeOddDump(t testing.TB) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "odd")
	dir := filepath.Join(root, "step3", "rank1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stats := []string{
		`"Max": NaN, "Min": -Infinity, "Mean": NaN, "Norm": Infinity`,
		`"Max": Infinity, "Min": 1e-300, "Mean": -0.0, "Norm": 1.7976931348623157e308`,
		`"Max": null, "Min": null, "Mean": null, "Norm": null`,
		`"Max": 3, "Min": -5e-324`,
		`"Max": true, "Min": false, "Mean": 0.1, "Norm": 123456789012345680000`,
		``,
	}
	shapes := []string{`"shape": [4, 7, 1]`, `"shape": []`, `"shape": [9007199254740993, 2]`, `"shape": [0, 3]`, ``}
	dtypes := []string{`"torch.float32"`, `"torch,odd \"dtype\"\n"`, `"torch.bfloat16"`}
	var b []byte
	b = append(b, `{"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {`...)
	for i, name := range oddNames {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n"+jsonString(name)+`: {"input_args": [`...)
		for k := range 3 {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, tensorJSON(dtypes[(i+k)%len(dtypes)], shapes[(i+k)%len(shapes)], stats[(i+k)%len(stats)], k == 1)...)
		}
		b = append(b, `], "input_kwargs": {`...)
		b = append(b, jsonString("key,\"q\"\n"+name[:3])+": "+tensorJSON(dtypes[i%3], shapes[i%5], stats[(i+3)%6], false)...)
		b = append(b, `}, "output": [`...)
		b = append(b, tensorJSON(dtypes[(i+1)%3], shapes[(i+2)%5], stats[i%6], true)...)
		b = append(b, `]}`...)
	}
	b = append(b, "}}\n"...)
	if err := os.WriteFile(filepath.Join(dir, "dump.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func tensorJSON(dtype, shape, stats string, grad bool) string {
	s := `{"type": "torch.Tensor", "dtype": ` + dtype
	if shape != "" {
		s += ", " + shape
	}
	if stats != "" {
		s += ", " + stats
	}
	if grad {
		s += `, "requires_grad": true`
	} else {
		s += `, "requires_grad": false`
	}
	return s + "}"
}

// jsonString quotes s for JSON, escaping control characters.
func jsonString(s string) string {
	out := []byte{'"'}
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			out = append(out, '\\', byte(r))
		case r < 0x20:
			out = append(out, []byte(`\u00`+string("0123456789abcdef"[r>>4])+string("0123456789abcdef"[r&15]))...)
		default:
			out = append(out, string(r)...)
		}
	}
	return string(append(out, '"'))
}
