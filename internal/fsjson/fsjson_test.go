package fsjson

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// stdString is how encoding/json writes s without HTML escaping.
func stdString(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// loneByteEscape finds an escape this package reads as a byte: \udc80 to
// \udcff not preceded by the escape of a high surrogate.
var loneByteEscape = regexp.MustCompile(`(?i)\\udc[89a-f][0-9a-f]`)

// check holds the package to its doc on one string: Append writes valid
// UTF-8 as encoding/json does, Decode gives the bytes back, and
// encoding/json reads what Append wrote as the string with U+FFFD for
// each byte that is not UTF-8.
func check(t testing.TB, s string) {
	t.Helper()
	lit := Append(nil, s)
	if utf8.ValidString(s) {
		if want := stdString(t, s); string(lit) != want {
			t.Fatalf("%q: Append %s, encoding/json %s", s, lit, want)
		}
	} else if !utf8.Valid(lit) {
		t.Fatalf("%q: Append wrote bytes that are not UTF-8: %q", s, lit)
	}
	back, err := Decode(lit)
	if err != nil || back != string(s) {
		t.Fatalf("%q: written %s, read back %q (%v)", s, lit, back, err)
	}
	var std string
	if err := json.Unmarshal(lit, &std); err != nil || std != replacedEach(s) {
		t.Fatalf("%q: encoding/json reads %s as %q (%v), want %q", s, lit, std, err, replacedEach(s))
	}
	var v struct{ P String }
	if err := json.Unmarshal([]byte(`{"P":`+string(lit)+`}`), &v); err != nil || string(v.P) != s {
		t.Fatalf("%q: as a member, read back %q (%v)", s, v.P, err)
	}
	// as a member, through an encoder that escapes HTML
	m, err := json.Marshal(struct{ P String }{String(s)})
	if err != nil {
		t.Fatal(err)
	}
	if std, _ := json.Marshal(struct{ P string }{s}); utf8.ValidString(s) && !bytes.Equal(m, std) {
		t.Fatalf("%q: as a member, written %s; encoding/json writes %s", s, m, std)
	}
}

// replacedEach is s with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as encoding/json writes it.
func replacedEach(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

func TestRoundTrip(t *testing.T) {
	for _, s := range []string{
		"", "/data/dump", "/data/r\xe9sultats/dump", "\xff", "a\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\x80",
		"é", "\u2028\u2029", "<>&", "\x00\x01\x1f\x7f", "\"\\/\b\f\n\r\t", "\U0001F600\xe2\x82", "\ufffd", "\xef\xbf\xbd\xff",
	} {
		check(t, s)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab/\\\"\x00\x1f\x7f\x80\xbf\xc0\xc3\xa9\xe2\x80\xa8\xed\xf0\x9f\xff<")
	for range 20000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		check(t, string(b))
	}
}

// Decode reads every JSON string as encoding/json does, but for the lone
// \udc80-\udcff escapes; it refuses what encoding/json refuses.
func TestDecodeLikeEncodingJSON(t *testing.T) {
	for _, lit := range []string{
		`""`, `"abc"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00"`, `"\udc7f"`, `"\ud800\u0041"`,
		`"\ud800\udc80"`, `"\/"`, `"\x"`, `"\u12"`, `"a` + "\x01" + `"`, `"` + "\xff" + `"`, `12`, `null`, `"`, `"a"b"`, `{}`,
		`"\udc80"`, `"\uDCFF"`,
	} {
		got, err := Decode([]byte(lit))
		var want string
		werr := json.Unmarshal([]byte(lit), &want)
		if loneByteEscape.MatchString(lit) && !strings.Contains(strings.ToLower(lit), `\ud800\udc`) {
			if err != nil || utf8.ValidString(got) {
				t.Errorf("%s: read %q (%v): want a byte that is not UTF-8", lit, got, err)
			}
			continue
		}
		if (err == nil) != (werr == nil) || (err == nil && got != want) {
			t.Errorf("%s: Decode %q (%v), encoding/json %q (%v)", lit, got, err, want, werr)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "/data/r\xe9sultats", "\xed\xa0\x80", "<\u2028>", "\x00\\\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { check(t, s) })
}

// FuzzDecode: whatever the literal, Decode does not panic, refuses what
// encoding/json refuses, and reads as encoding/json reads a literal
// without a lone \udc80-\udcff escape.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`"a"`, `"\udcff"`, `"\ud83d\ude00"`, `"\ud800\udcff"`, `"\u"`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		got, err := Decode(lit)
		var want string
		werr := json.Unmarshal(lit, &want)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: Decode %v, encoding/json %v", lit, err, werr)
		}
		if err == nil && !loneByteEscape.Match(lit) && got != want {
			t.Fatalf("%q: Decode %q, encoding/json %q", lit, got, want)
		}
	})
}
