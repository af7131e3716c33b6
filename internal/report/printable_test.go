package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nanhunt/nanhunt/verdict"
)

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Torch.sqrt.0.forward", "Torch.sqrt.0.forward"},
		{"Torch.ß√.0.forward", "Torch.ß√.0.forward"},
		{"a\x1b]0;pwned\x07b", `a\x1b]0;pwned\x07b`},
		{"x\x1b[2Jy", `x\x1b[2Jy`},
		{"over\rwrite", `over\rwrite`},
		{"two\nlines\tand tab", `two\nlines` + "\t" + `and tab`},
		{"nul\x00", `nul\x00`},
		{"del\x7f", `del\x7f`},
		{"c1\u009bcsi", `c1\u009bcsi`},
		{"bidi\u202eevil", `bidi\u202eevil`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`},
		{"bad\xffutf8", `bad\xffutf8`},
		{`kept\x1b`, `kept\x1b`},
	} {
		if got := Printable(c.in); got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// unsafeOut reports the first byte or rune of s that a terminal would act
// on or reorder text by.
func unsafeOut(s string) (rune, bool) {
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return r, true
		}
		if (r < 0x20 && r != '\t') || r == 0x7f || unsafeRune(r) {
			return r, true
		}
	}
	return 0, false
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "Torch.sqrt.0.forward", "\x1b]0;x\a", "\r\n\t", "\xff\xfe", "\u202e", "\\x1b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Printable(s)
		if r, bad := unsafeOut(p); bad {
			t.Fatalf("Printable(%q) = %q still holds %U", s, p, r)
		}
		if Printable(p) != p {
			t.Fatalf("Printable is not idempotent on %q: %q then %q", s, p, Printable(p))
		}
		if _, bad := unsafeOut(s); !bad && utf8.ValidString(s) && p != s {
			t.Fatalf("Printable changed the printable %q into %q", s, p)
		}
	})
}

// A verdict whose names hold terminal escapes is written with them
// escaped, in text and in Markdown.
func TestReportsEscapeNames(t *testing.T) {
	v := readVerdict(t, "testdata/markdown_bwd-sqrt-zero-L1.json")
	evil := "Torch.sqrt\x1b]0;pwned\x07\x1b[2J\r.0.backward"
	v.Origin.Op = evil
	v.Warnings = append(v.Warnings, verdictWarning("/dump/step5/rank\r2/dump.json", "odd \x1b[31m name"))
	for name, write := range map[string]func(*bytes.Buffer) error{
		"text":     func(b *bytes.Buffer) error { return Text(b, v) },
		"markdown": func(b *bytes.Buffer) error { return Markdown(b, v) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.ContainsAny(out, "\x1b\x07\r") {
			t.Errorf("%s: a raw escape, BEL or CR reached the output", name)
		}
		if !strings.Contains(out, `x1b]0;pwned`) { // Markdown also escapes the backslash
			t.Errorf("%s: the escaped name is not in the output", name)
		}
	}
}

func verdictWarning(file, message string) verdict.Warning {
	return verdict.Warning{File: file, Message: message}
}
