package export

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/internal/parquetwrite/jsread"
)

// exportCase is a dump the readers' tests export whole or in part.
type exportCase struct {
	name  string
	path  func(t testing.TB) string
	steps map[int]bool
}

// exportCases are a real fixture, a real run with proc folders, a
// generated multi-rank run and the odd dump.
var exportCases = []exportCase{
	{"fixture bwd-sqrt-zero L1 step 5", func(t testing.TB) string {
		return filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	}, map[int]bool{5: true}},
	{"real resnet50 mix, proc folders", func(t testing.TB) string {
		return filepath.Join(fixtures(t), "msprobe-real", "gpu-resnet50-mix-2steps")
	}, nil},
	{"generated tie-log-negative step 2", func(t testing.TB) string { return generate(t, "tie-log-negative") }, map[int]bool{2: true}},
	{"odd names and values", func(t testing.TB) string { return writeOddDump(t) }, nil},
}

// hyparquet, a Parquet reader in JavaScript that shares no code with the
// writer, reads every cell of every file the export writes as it was
// written: the footer's row count and metadata, the column names, and each
// row's values, NaN, ±Inf and -0, nulls, empty shapes and odd strings
// included.
func TestHyparquetReadsExport(t *testing.T) {
	for _, tc := range exportCases {
		t.Run(tc.name, func(t *testing.T) {
			s := run(t, Options{Path: tc.path(t), Steps: tc.steps, Version: "v1.2.3"})
			if s.Written == 0 || !s.Complete() {
				t.Fatalf("wrote %d files, %d damaged", s.Written, s.Damaged)
			}
			var paths []string
			for _, fr := range s.Files {
				paths = append(paths, filepath.Join(s.Out, fr.Path))
			}
			files := jsread.ReadAll(t, paths...)
			for k, fr := range s.Files {
				f := files[k]
				if !slices.Equal(f.Columns, columnNames()) {
					t.Fatalf("%s: columns %v", fr.Path, f.Columns)
				}
				if f.Metadata["nanhunt.version"] != "v1.2.3" || f.Metadata["nanhunt.source"] != absPath(t, fr.Source) {
					t.Errorf("%s: metadata %v", fr.Path, f.Metadata)
				}
				rows := writtenRows(t, fr.Source, fr.Step, fr.Rank)
				want := make([][]any, len(rows))
				for i := range rows {
					want[i] = cells(&rows[i])
				}
				jsread.CheckRows(t, fr.Path, f, want)
			}
		})
	}
}

// The odd dump holds what the readers' tests claim to cover, so that they
// compare it.
func TestOddDumpCoverage(t *testing.T) {
	root := writeOddDump(t)
	rows := writtenRows(t, filepath.Join(root, "step3", "rank1", "dump.json"), 3, 1)
	seen := map[string]bool{}
	for _, r := range rows {
		for _, v := range [4]*float64{r.Max, r.Min, r.Mean, r.Norm} {
			switch {
			case v == nil:
				seen["null"] = true
			case math.IsNaN(*v):
				seen["NaN"] = true
			case math.IsInf(*v, 1):
				seen["+Inf"] = true
			case math.IsInf(*v, -1):
				seen["-Inf"] = true
			case *v == 0 && math.Signbit(*v):
				seen["-0"] = true
			}
		}
		if r.Shape != nil && len(r.Shape) == 0 {
			seen["scalar shape"] = true
		}
		if r.Shape != nil && len(r.Shape) > 0 && r.Shape[0] > 1<<53 {
			seen["dimension past 2^53"] = true
		}
		seen["name "+r.EntryName] = true
	}
	want := []string{"null", "NaN", "+Inf", "-Inf", "-0", "scalar shape", "dimension past 2^53"}
	for _, n := range oddNames {
		want = append(want, "name "+n)
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("the odd dump has no row with %q", w)
		}
	}
}

func absPath(t testing.TB, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
