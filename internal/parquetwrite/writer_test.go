package parquetwrite

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// row is what the tests write, read back by parquet-go, an independent
// implementation of the format.
type row struct {
	B  bool     `parquet:"b"`
	I  int32    `parquet:"i"`
	L  *int64   `parquet:"l,optional"`
	D  *float64 `parquet:"d,optional"`
	S  string   `parquet:"s"`
	OS *string  `parquet:"os,optional"`
	Sh []int64  `parquet:"sh,list,optional"`
	B2 bool     `parquet:"b2"`
}

var testColumns = []Column{
	{Name: "b", Kind: Bool},
	{Name: "i", Kind: Int32},
	{Name: "l", Kind: Int64, Optional: true},
	{Name: "d", Kind: Double, Optional: true},
	{Name: "s", Kind: String, Dictionary: true},
	{Name: "os", Kind: String, Optional: true, Dictionary: true},
	{Name: "sh", Kind: Int64List},
	{Name: "b2", Kind: Bool},
}

func writeRows(t testing.TB, rows []row, opt Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, testColumns, opt)
	w.SetMetadata("k", "v")
	for _, r := range rows {
		w.Bool(0, r.B)
		w.Int32(1, r.I)
		if r.L != nil {
			w.Int64(2, *r.L)
		} else {
			w.Null(2)
		}
		if r.D != nil {
			w.Double(3, *r.D)
		} else {
			w.Null(3)
		}
		w.String(4, r.S)
		if r.OS != nil {
			w.String(5, *r.OS)
		} else {
			w.Null(5)
		}
		if r.Sh != nil {
			w.Int64s(6, r.Sh)
		} else {
			w.Null(6)
		}
		w.Bool(7, r.B2)
		if err := w.EndRow(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readBack reads a file with parquet-go and checks its footer.
func readBack(t testing.TB, b []byte, nrows int) []row {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("parquet-go cannot open the file: %v", err)
	}
	if f.NumRows() != int64(nrows) {
		t.Fatalf("footer: %d rows, want %d", f.NumRows(), nrows)
	}
	if v, ok := f.Lookup("k"); !ok || v != "v" {
		t.Errorf("metadata k = %q, %v", v, ok)
	}
	got, err := parquet.Read[row](bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("parquet-go cannot read the rows: %v", err)
	}
	return got
}

// sameRows compares rows, NaN equal to NaN bit for bit.
func sameRows(t testing.TB, got, want []row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		gd, wd := g.D, w.D
		g.D, w.D = nil, nil
		if !reflect.DeepEqual(g, w) || (gd == nil) != (wd == nil) || (gd != nil && math.Float64bits(*gd) != math.Float64bits(*wd)) {
			t.Fatalf("row %d: read %+v (d %v), wrote %+v (d %v)", i, g, gd, w, wd)
		}
	}
}

func randomRows(rng *rand.Rand, n int) []row {
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64}
	strs := []string{"", "torch.float32", "Torch.sqrt.0.backward", "\u00e9\u4e2d", string(make([]byte, 300))}
	rows := make([]row, n)
	for i := range rows {
		r := &rows[i]
		r.B, r.B2 = rng.IntN(2) == 0, rng.IntN(7) == 0
		r.I = rng.Int32() - math.MaxInt32/2
		if rng.IntN(3) > 0 {
			v := rng.Int64() - math.MaxInt64/2
			r.L = &v
		}
		if rng.IntN(4) > 0 {
			v := rng.NormFloat64() * 1e3
			if rng.IntN(5) == 0 {
				v = specials[rng.IntN(len(specials))]
			}
			r.D = &v
		}
		r.S = strs[rng.IntN(len(strs))]
		if rng.IntN(2) == 0 {
			s := strs[rng.IntN(len(strs))]
			r.OS = &s
		}
		switch rng.IntN(4) {
		case 0: // null
		case 1:
			r.Sh = []int64{}
		default:
			r.Sh = make([]int64, 1+rng.IntN(5))
			for j := range r.Sh {
				r.Sh[j] = rng.Int64N(1 << 40)
			}
		}
	}
	return rows
}

func TestWriterReadBack(t *testing.T) {
	tests := []struct {
		name string
		rows int
		opt  Options
	}{
		{"no rows", 0, Options{}},
		{"one row", 1, Options{}},
		{"one row group", 1000, Options{}},
		{"many pages and row groups", 5000, Options{RowGroupRows: 700, PageBytes: 512}},
		{"one row per group and page", 40, Options{RowGroupRows: 1, PageBytes: 1}},
		{"stored", 3000, Options{Stored: true, RowGroupRows: 1000, PageBytes: 4096}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := randomRows(rand.New(rand.NewPCG(uint64(i), 1)), tt.rows)
			b := writeRows(t, rows, tt.opt)
			sameRows(t, readBack(t, b, tt.rows), rows)
		})
	}
}

// A dictionary that outgrows its bound leaves the rest of the row group
// PLAIN; the next row group starts a new one.
func TestDictionaryFallback(t *testing.T) {
	var rows []row
	for i := range 6000 {
		r := row{S: fmt.Sprintf("%0400d", i%4000)} // 4,000 distinct values of 400 bytes: 1.6 MB
		if i%3 == 0 {
			s := "few"
			r.OS = &s
		}
		rows = append(rows, r)
	}
	for _, opt := range []Options{{}, {RowGroupRows: 2500}, {RowGroupRows: 2500, PageBytes: 300, Stored: true}} {
		b := writeRows(t, rows, opt)
		sameRows(t, readBack(t, b, len(rows)), rows)
	}
}

// Runs of levels longer than eight, and alternating ones, both survive.
func TestLevelRuns(t *testing.T) {
	var rows []row
	for i := range 100 {
		r := row{S: "x"}
		if i < 37 || (i > 60 && i%2 == 0) {
			v := float64(i)
			r.D = &v
			r.Sh = []int64{int64(i)}
		}
		rows = append(rows, r)
	}
	sameRows(t, readBack(t, writeRows(t, rows, Options{}), len(rows)), rows)
}

// The int statistics of each chunk are the min and max of its values.
func TestStatistics(t *testing.T) {
	rows := randomRows(rand.New(rand.NewPCG(9, 9)), 2000)
	b := writeRows(t, rows, Options{RowGroupRows: 512})
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for g := range f.RowGroups() {
		lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
		nulls := 0
		for _, r := range rows[g*512 : min(len(rows), (g+1)*512)] {
			lo, hi = min(lo, r.I), max(hi, r.I)
			if r.L == nil {
				nulls++
			}
		}
		md := f.Metadata().RowGroups[g].Columns
		st := md[1].MetaData.Statistics
		if got := int32(leUint32(st.MinValue)); got != lo {
			t.Errorf("row group %d: min %d, want %d", g, got, lo)
		}
		if got := int32(leUint32(st.MaxValue)); got != hi {
			t.Errorf("row group %d: max %d, want %d", g, got, hi)
		}
		if n := md[2].MetaData.Statistics.NullCount; n != int64(nulls) {
			t.Errorf("row group %d: column l has %d nulls, statistics say %d", g, nulls, n)
		}
	}
}

func leUint32(b []byte) uint32 {
	if len(b) != 4 {
		return 0
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// Misuse is an error, not a corrupt file.
func TestMisuse(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, testColumns[:2], Options{})
	w.Bool(0, true)
	if err := w.EndRow(); err == nil {
		t.Error("a row without column i: no error")
	}
	w = NewWriter(&buf, testColumns[:2], Options{})
	w.Int32(0, 1)
	w.Int32(1, 1)
	if err := w.EndRow(); err == nil {
		t.Error("an int in a bool column: no error")
	}
	w = NewWriter(&buf, testColumns[:2], Options{})
	w.Null(0)
	if err := w.EndRow(); err == nil {
		t.Error("a null in a required column: no error")
	}
}

// FuzzWriter writes rows drawn from the input and reads them back with
// parquet-go: the differential oracle.
func FuzzWriter(f *testing.F) {
	f.Add(uint64(1), uint16(10), uint16(100), uint16(1000))
	f.Add(uint64(2), uint16(1), uint16(1), uint16(1))
	f.Fuzz(func(t *testing.T, seed uint64, n, group, page uint16) {
		rows := randomRows(rand.New(rand.NewPCG(seed, seed>>7)), int(n%2000))
		b := writeRows(t, rows, Options{RowGroupRows: int(group), PageBytes: int(page), Stored: seed&1 == 0})
		sameRows(t, readBack(t, b, len(rows)), rows)
	})
}
