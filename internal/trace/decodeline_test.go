package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// checkDecodeLine holds unmarshalLine to encoding/json on one line: the
// same value, or an error from both. written says nanhunt wrote it so.
func checkDecodeLine(t *testing.T, b []byte, written bool) {
	t.Helper()
	for _, mk := range []func() any{func() any { return new(summaryLine) }, func() any { return new(lightLine) }} {
		want, got := mk(), mk()
		werr, gerr := json.Unmarshal(b, want), unmarshalLine(b, got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%T of %.200q: encoding/json says %v, unmarshalLine %v", want, b, werr, gerr)
		}
		if sl, ok := want.(*summaryLine); ok {
			// when the members around a record's step and rank say them for
			// sure, they are what the record holds
			step, rank, sure := recordStepRank(b)
			if sure && werr == nil && (sl.Record == nil || step != sl.Record.Step || rank != sl.Record.Rank) {
				t.Fatalf("%.200q: recordStepRank says step %d rank %d", b, step, rank)
			}
			if !sure && written && sl.Record != nil {
				t.Fatalf("%.200q: a whole record line, and recordStepRank is not sure of it", b)
			}
		}
		if werr == nil && firstDiff(reflect.ValueOf(want), reflect.ValueOf(got), "") != "" {
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			i := 0
			for i < len(wj) && i < len(gj) && wj[i] == gj[i] {
				i++
			}
			t.Fatalf("%T of %.200q: decoded differently at %d (%s):\n%.300s\n%.300s", want, b, i,
				firstDiff(reflect.ValueOf(want), reflect.ValueOf(got), ""), wj[max(0, i-100):], gj[max(0, i-100):])
		}
	}
}

// Summary lines decode as encoding/json decodes them, and recordStepRank
// reads a record's step and rank without decoding it: every line of the
// summaries of the real msprobe run and of a tensor-parallel one, and
// those lines cut, with a byte changed, or with a member doubled.
func TestDecodeLineLikeEncodingJSON(t *testing.T) {
	realRun := filepath.Join(t.TempDir(), "dump")
	if err := copyDir(filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1"), realRun); err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	for _, dir := range []string{realRun, scenarioDir(t, "tp-clip-sgd")} {
		for _, f := range summariseNodes(t, []string{dir}, false) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, bytes.Split(bytes.TrimSpace(b), []byte("\n"))...)
		}
	}
	if len(lines) < 10 {
		t.Fatalf("%d summary lines", len(lines))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	junk := []byte(`{}[]",:0-eE.tfn\ xé` + "\xff\x00")
	for _, l := range lines {
		checkDecodeLine(t, l, true)
		for range 20 {
			b := bytes.Clone(l)
			switch p := rng.IntN(len(b)); rng.IntN(3) {
			case 0:
				b = b[:p]
			case 1:
				b[p] = junk[rng.IntN(len(junk))]
			default: // a member written twice
				if i := bytes.Index(b, []byte(`"step":`)); i > 0 {
					b = append(append(bytes.Clone(b[:i]), `"step":7,`...), b[i:]...)
				}
			}
			checkDecodeLine(t, b, false)
		}
	}
}

// firstDiff names where two values decoded differently, "" when they did
// not (a NaN statistic is the same NaN).
func firstDiff(a, b reflect.Value, path string) string {
	if a.Kind() != b.Kind() {
		return path + ": kinds"
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil vs not"
			}
			return ""
		}
		return firstDiff(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if d := firstDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
	case reflect.Slice, reflect.Map:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v vs %v (len %d, %d)", path, a.IsNil(), b.IsNil(), a.Len(), b.Len())
		}
		if a.Len() != b.Len() {
			return path + ": lengths"
		}
		if a.Kind() == reflect.Slice {
			for i := range a.Len() {
				if d := firstDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
					return d
				}
			}
		} else {
			for _, k := range a.MapKeys() {
				if d := firstDiff(a.MapIndex(k), b.MapIndex(k), fmt.Sprintf("%s[%v]", path, k)); d != "" {
					return d
				}
			}
		}
	case reflect.Float64, reflect.Float32:
		if x, y := a.Float(), b.Float(); x != y && (x == x || y == y) { // NaN is NaN
			return path + ": values"
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return path + ": values"
		}
	}
	return ""
}
