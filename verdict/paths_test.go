package verdict

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// warningJSON has the members of Warning, in its order, with its tags: a
// member added to one is added to the other.
func TestWarningJSONMirrorsWarning(t *testing.T) {
	a, b := reflect.TypeFor[Warning](), reflect.TypeFor[warningJSON]()
	if a.NumField() != b.NumField() {
		t.Fatalf("Warning has %d members, warningJSON %d", a.NumField(), b.NumField())
	}
	for i := range a.NumField() {
		if fa, fb := a.Field(i), b.Field(i); fa.Name != fb.Name || fa.Tag != fb.Tag {
			t.Errorf("member %d: Warning has %s %q, warningJSON %s %q", i, fa.Name, fa.Tag, fb.Name, fb.Tag)
		}
	}
}

// encode writes v as nanhunt's JSON verdict writer and the summaries'
// encoder write: without and with HTML escaping.
func encode(t *testing.T, v any, escapeHTML bool) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A warning's file and a link's path and target keep their bytes through
// JSON, those that are not UTF-8 as \udcXX; a path that is UTF-8 is written
// as any string is, whether the encoder escapes HTML or not.
func TestPathsByteForByte(t *testing.T) {
	off := int64(7)
	for _, c := range []struct {
		name string
		v    Scanned
		w    []Warning
	}{
		{"utf-8", Scanned{Links: []Link{{Path: "/d/<é>&x", Target: "/disk2/\u2028"}}}, []Warning{{File: "/d/a&b<c>.json", Offset: &off, Message: "x <y> & z"}, {Message: "no file"}}},
		{"not utf-8", Scanned{Links: []Link{{Path: "/d/r\xe9sultats", Target: "/disk\xff2"}}}, []Warning{{File: "/d/\xed\xa0\x80/dump.json", Message: "m\xff"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, html := range []bool{false, true} {
				type plainLink struct {
					Path   string `json:"path"`
					Target string `json:"target"`
				}
				type plainWarning struct {
					File    string `json:"file,omitempty"`
					Offset  *int64 `json:"offset,omitempty"`
					Message string `json:"message"`
				}
				got := encode(t, struct {
					L []Link
					W []Warning
				}{c.v.Links, c.w}, html)
				if c.name == "utf-8" {
					var pl []plainLink
					for _, l := range c.v.Links {
						pl = append(pl, plainLink(l))
					}
					var pw []plainWarning
					for _, w := range c.w {
						pw = append(pw, plainWarning(w))
					}
					if want := encode(t, struct {
						L []plainLink
						W []plainWarning
					}{pl, pw}, html); got != want {
						t.Fatalf("escape HTML %v: written\n%s\nencoding/json writes\n%s", html, got, want)
					}
				} else if !strings.Contains(got, `/d/r\udce9sultats`) || !strings.Contains(got, `\udced\udca0\udc80`) {
					t.Fatalf("the bytes that are not UTF-8 are not \\udcXX:\n%s", got)
				}
				var back struct {
					L []Link
					W []Warning
				}
				if err := json.Unmarshal([]byte(got), &back); err != nil {
					t.Fatal(err)
				}
				if back.L[0] != c.v.Links[0] || back.W[0].File != c.w[0].File || (back.W[0].Offset == nil) != (c.w[0].Offset == nil) {
					t.Fatalf("read back %+v %+v, want %+v %+v", back.L, back.W, c.v.Links, c.w)
				}
			}
		})
	}
}

// The paths of revision 2 are written byte for byte too.
func TestPathBytes(t *testing.T) {
	v := Verdict{Schema: Schema, Scanned: Scanned{Path: Path("dump-\xe9")},
		Origin: &Origin{Step: 1, Ranks: []int{0}, Op: "x", Timeline: &Timeline{File: Path("d\xff/dump.json")}}}
	b, err := json.Marshal(v)
	if err != nil || !bytes.Contains(b, []byte(`"path":"dump-\udce9"`)) || !bytes.Contains(b, []byte(`"file":"d\udcff/dump.json"`)) {
		t.Fatalf("%s (%v)", b, err)
	}
	w, err := Parse(b)
	if err != nil || w.Scanned.Path != v.Scanned.Path || w.Origin.Timeline.File != v.Origin.Timeline.File {
		t.Errorf("read back %q, %q (%v)", w.Scanned.Path, w.Origin.Timeline.File, err)
	}
}
