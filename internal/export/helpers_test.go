package export

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/internal/policy"

	"github.com/parquet-go/parquet-go"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/synth"
)

// fixtures is ../shared/fixtures next to the repository; tests that need it
// skip when it is absent.
func fixtures(t testing.TB) string { return fixturedir.Dir(t) }

// generate writes a synth scenario to a temporary folder.
func generate(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "dump")
	for _, s := range synth.Scenarios() {
		if s.Name == name {
			if _, err := synth.Generate(s.Spec, dir); err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	t.Fatalf("no scenario %s", name)
	return ""
}

func run(t testing.TB, opt Options) *Summary {
	t.Helper()
	if opt.Out == "" {
		opt.Out = filepath.Join(t.TempDir(), "out")
	}
	s, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return s
}

// openParquet opens a Parquet file with parquet-go, closing it at the
// end of the test.
func openParquet(t testing.TB, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, info.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pf
}

// readRows reads a Parquet file back, checking its row count in the footer.
func readRows(t testing.TB, path string) []Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, info.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rows, err := parquet.Read[Row](f, info.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if int64(len(rows)) != pf.NumRows() {
		t.Fatalf("%s: read %d rows, footer says %d", path, len(rows), pf.NumRows())
	}
	return rows
}

// want is a row as the dump.Reader describes it, read independently of
// the export code.
type want struct {
	index                int
	name, field, slot    string
	dtype                string
	shape                []int
	max, min, mean, norm dump.Stat
	class                dump.Class
	stats                bool
	requiresGrad         bool
}

// readDump lists the tensors of a dump.json in file order, and the damage.
func readDump(t testing.TB, path string) ([]want, *dump.FormatError) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := dump.NewReader(f, dump.ReaderOptions{Details: true})
	var out []want
	for r.Next() {
		e := r.Entry()
		for _, tn := range e.Tensors {
			out = append(out, want{
				index: e.Index, name: e.Name, field: tn.Field.String(), slot: tn.Slot,
				dtype: tn.Dtype, shape: tn.Shape, max: tn.Max, min: tn.Min, mean: tn.Mean, norm: tn.Norm,
				class: policy.Holds(&tn), stats: tn.HasStats(), requiresGrad: tn.RequiresGrad,
			})
		}
	}
	var fe *dump.FormatError
	if err := r.Err(); err != nil && !errors.As(err, &fe) {
		t.Fatalf("%s: %v", path, err)
	}
	return out, fe
}

// sameStat compares a written statistic with the dump's, NaN equal to NaN.
func sameStat(got *float64, st dump.Stat) bool {
	switch st.Kind {
	case dump.StatNumber, dump.StatBool:
		if got == nil {
			return false
		}
		if math.IsNaN(st.Value) {
			return math.IsNaN(*got)
		}
		return *got == st.Value
	}
	return got == nil
}

// checkRows compares the rows of one file with what the reader yields.
func checkRows(t *testing.T, file string, rows []Row, wants []want, step, rank int) {
	t.Helper()
	if len(rows) != len(wants) {
		t.Fatalf("%s: %d rows, the reader yields %d tensors", file, len(rows), len(wants))
	}
	for i, r := range rows {
		w := wants[i]
		if r.Step != int32(step) || r.Rank != int32(rank) {
			t.Fatalf("%s row %d: step %d rank %d, want %d %d", file, i, r.Step, r.Rank, step, rank)
		}
		if int(r.EntryIndex) != w.index || r.EntryName != w.name || r.Field != w.field || r.Slot != w.slot || r.Dtype != w.dtype {
			t.Fatalf("%s row %d: %d %s %s %s %s, want %d %s %s %s %s", file, i,
				r.EntryIndex, r.EntryName, r.Field, r.Slot, r.Dtype, w.index, w.name, w.field, w.slot, w.dtype)
		}
		if len(r.Shape) != len(w.shape) {
			t.Fatalf("%s row %d (%s): shape %v, want %v", file, i, w.name, r.Shape, w.shape)
		}
		for k := range r.Shape {
			if r.Shape[k] != int64(w.shape[k]) {
				t.Fatalf("%s row %d (%s): shape %v, want %v", file, i, w.name, r.Shape, w.shape)
			}
		}
		for _, s := range []struct {
			name string
			got  *float64
			want dump.Stat
		}{{"max", r.Max, w.max}, {"min", r.Min, w.min}, {"mean", r.Mean, w.mean}, {"norm", r.Norm, w.norm}} {
			if !sameStat(s.got, s.want) {
				t.Fatalf("%s row %d (%s %s %s): %s %v, want %+v", file, i, w.name, w.field, w.slot, s.name, s.got, s.want)
			}
		}
		nf := w.class.String()
		if !w.stats {
			nf = "unknown"
		}
		if r.Nonfinite != nf || r.RequiresGrad != w.requiresGrad {
			t.Fatalf("%s row %d (%s): nonfinite %q requires_grad %v, want %q %v", file, i, w.name, r.Nonfinite, r.RequiresGrad, nf, w.requiresGrad)
		}
		if i > 0 && rows[i-1].EntryIndex > r.EntryIndex {
			t.Fatalf("%s row %d: entry_index %d after %d", file, i, r.EntryIndex, rows[i-1].EntryIndex)
		}
	}
}
