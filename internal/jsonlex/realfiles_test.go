package jsonlex

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// realDumps are dump.json files written by msprobe: two with bare NaN and
// Infinity tokens, one from an ordinary run.
var realDumps = []string{
	"fixtures/msprobe-generated/fwd-log-neg-rank2-step5/L1/step5/rank2/dump.json",
	"fixtures/msprobe-generated/bwd-sqrt-zero-rank2-step5/L1/step5/rank2/dump.json",
	"fixtures/msprobe-real/gpu-resnet50-mix-2steps/step0/proc2016/dump.json",
}

func readShared(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedDir, rel))
	if err != nil {
		t.Fatalf("%v (the real msprobe fixtures belong in %s, next to the repository)", err, sharedDir)
	}
	return b
}

// countBare counts the bare tokens outside strings with a plain byte
// scan, independently of the lexer and of the oracle.
func countBare(in []byte) map[Kind]int {
	n := map[Kind]int{}
	inString := false
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case bytes.HasPrefix(in[i:], []byte("-Infinity")):
			n[NegInf]++
			i += len("-Infinity") - 1
		case bytes.HasPrefix(in[i:], []byte("Infinity")):
			n[PosInf]++
			i += len("Infinity") - 1
		case bytes.HasPrefix(in[i:], []byte("NaN")):
			n[NaN]++
			i += len("NaN") - 1
		}
	}
	return n
}

func TestRealDumps(t *testing.T) {
	for _, rel := range realDumps {
		t.Run(strings.Split(rel, "/")[2], func(t *testing.T) {
			in := readShared(t, rel)
			got, err := lexAll(bytes.NewReader(in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			counts := map[Kind]int{}
			for _, tk := range got {
				counts[tk.Kind]++
			}
			var sb strings.Builder
			for k := EOF; k <= NegInf; k++ {
				sb.WriteString(" " + k.String() + "=" + strconv.Itoa(counts[k]))
			}
			t.Logf("%s: %d bytes,%s", rel, len(in), sb.String())

			want, ok := oracleTokens(bytes.NewReader(bareShim(in)))
			if !ok {
				t.Fatal("the oracle rejects the file")
			}
			oracleCounts := map[Kind]int{}
			for _, tk := range want {
				oracleCounts[tk.Kind]++
			}
			scan := countBare(in)
			for _, k := range []Kind{NaN, PosInf, NegInf} {
				if counts[k] != oracleCounts[k] || counts[k] != scan[k] {
					t.Errorf("%v: lexer %d, oracle %d, byte scan %d", k, counts[k], oracleCounts[k], scan[k])
				}
			}
			if same, diff := equalToks(stripped(got), want); !same {
				t.Errorf("differs from the oracle: %s", diff)
			}
			if strings.Contains(rel, "msprobe-generated") && counts[NaN] == 0 {
				t.Errorf("no NaN token in %s", rel)
			}

			// Skipping every entry of "data" lands on the same offsets.
			l := New(bytes.NewReader(in), Options{WindowSize: 4096})
			var ends []int64
			for {
				tk, err := l.Next()
				if err != nil {
					t.Fatal(err)
				}
				if tk.Kind == EOF {
					break
				}
				if tk.Kind == Name && l.Depth() == 2 {
					if err := l.SkipValue(); err != nil {
						t.Fatal(err)
					}
					ends = append(ends, l.InputOffset())
				}
			}
			var wantEnds []int64
			for i, tk := range got {
				if tk.Kind == Name && tk.Depth == 2 {
					d := 0
					for j := i + 1; j < len(got); j++ {
						switch got[j].Kind {
						case ObjectStart, ArrayStart:
							d++
						case ObjectEnd, ArrayEnd:
							d--
						}
						if d == 0 {
							wantEnds = append(wantEnds, got[j].End)
							break
						}
					}
				}
			}
			if len(ends) == 0 || len(ends) != len(wantEnds) {
				t.Fatalf("skipped %d entries, want %d", len(ends), len(wantEnds))
			}
			for i := range ends {
				if ends[i] != wantEnds[i] {
					t.Fatalf("entry %d: skip ends at %d, want %d", i, ends[i], wantEnds[i])
				}
			}
		})
	}
}

// TestAllFixtures runs the differential check on every JSON file of the
// shared fixtures (dump, stack and construct files of many ranks and steps).
func TestAllFixtures(t *testing.T) {
	root := filepath.Join(sharedDir, "fixtures")
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("%v (the real msprobe fixtures belong there)", err)
	}
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		in, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		got, lerr := lexAll(bytes.NewReader(in), Options{WindowSize: 8192})
		want, ok := oracleTokens(bytes.NewReader(bareShim(in)))
		if ok != (lerr == nil) {
			t.Errorf("%s: oracle accepts=%v, lexer: %v", path, ok, lerr)
			return nil
		}
		if ok {
			if same, diff := equalToks(withReplacedUTF8(got), want); !same {
				t.Errorf("%s: %s", path, diff)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files checked", n)
}
