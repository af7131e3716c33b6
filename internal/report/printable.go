package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Printable returns s with every character that could change what a
// terminal or a rendered page shows written as a Go escape: C0 and C1
// controls but the tab (ESC, CR, LF, BEL, NUL, ...), DEL, the Unicode marks that reorder
// text (bidirectional overrides and isolates) and bytes that are not
// UTF-8. Names in a dump are untrusted: without this, an op named
// "\x1b]0;…\a" would retitle the user's terminal and "\r" would overwrite
// the line it is on. Everything else, backslashes included, is kept, so
// Printable(Printable(s)) == Printable(s).
func Printable(s string) string {
	if printableAlready(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case (r < 0x20 && r != '\t') || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// printableAlready reports whether s holds nothing Printable changes: printable ASCII,
// or valid UTF-8 without controls and reordering marks.
func printableAlready(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	if ascii {
		return true
	}
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unsafeRune(r) {
			return false
		}
	}
	return true
}

// unsafeRune: a C1 control, or a mark that reorders the text around it
// (left-to-right and right-to-left marks, embeddings, overrides, isolates).
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// printableArgs returns args with every string made Printable, for the
// report writers' Fprintf: the formats are the program's own, the
// strings come from the dump.
func printableArgs(args []any) []any {
	for i, a := range args {
		switch x := a.(type) {
		case string:
			args[i] = Printable(x)
		case error:
			args[i] = Printable(x.Error())
		}
	}
	return args
}

// Fprintf is fmt.Fprintf with every string and error argument made
// Printable: for the command's lines that hold names and paths from a
// dump.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return fmt.Fprintf(w, format, printableArgs(args)...)
}
