package fsjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// String is a string that is written to JSON and read from it byte for
// byte, by the convention of the package doc.
type String string

// MarshalJSON writes s as a JSON string, its bytes that are not UTF-8 as
// \udcXX escapes.
func (s String) MarshalJSON() ([]byte, error) { return Append(nil, string(s)), nil }

// UnmarshalJSON reads a JSON string, its \udc80-\udcff escapes that are not
// half of a surrogate pair as the bytes 0x80-0xff. null leaves s as it is.
func (s *String) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	v, err := Decode(b)
	if err != nil {
		return err
	}
	*s = String(v)
	return nil
}

const hex = "0123456789abcdef"

// Append appends s to dst as a JSON string literal: as encoding/json writes
// it without HTML escaping (an encoder that escapes HTML does so over this
// output), except that a byte that is not part of valid UTF-8 is \udcXX.
func Append(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendEscapedASCII(dst, b)
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', 'd', 'c', hex[b>>4], hex[b&0xf])
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscapedASCII appends the escape encoding/json writes for an ASCII
// byte that cannot stand for itself in a JSON string.
func appendEscapedASCII(dst []byte, b byte) []byte {
	switch b {
	case '\\', '"':
		return append(dst, '\\', b)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
}

// errSyntax is the error of a literal that is no JSON string.
var errSyntax = errors.New("fsjson: not a JSON string")

// Decode reads one JSON string literal (quotes included). It reads as
// encoding/json reads, except that an escape \udc80 to \udcff that is not
// the second half of a surrogate pair gives the byte 0x80 to 0xff. A value
// that is no string is refused as encoding/json refuses it (null is "").
func Decode(lit []byte) (string, error) {
	lit = bytes.Trim(lit, " \t\r\n")
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		// not a literal: null, or what encoding/json refuses with its message
		var v string
		err := json.Unmarshal(lit, &v)
		return v, err
	}
	body := lit[1 : len(lit)-1]
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			var err error
			if out, i, err = appendEscape(out, body, i); err != nil {
				return "", err
			}
		case c == '"' || c < 0x20:
			return "", errSyntax
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(body[i:])
			out = utf8.AppendRune(out, r) // an invalid byte is U+FFFD, as encoding/json reads it
			i += size
		}
	}
	return string(out), nil
}

// appendEscape reads the escape at body[i] and appends what it stands for;
// it returns where the text after it starts.
func appendEscape(out, body []byte, i int) ([]byte, int, error) {
	if i+1 >= len(body) {
		return out, i, errSyntax
	}
	switch c := body[i+1]; c {
	case '"', '\\', '/':
		return append(out, c), i + 2, nil
	case 'b':
		return append(out, '\b'), i + 2, nil
	case 'f':
		return append(out, '\f'), i + 2, nil
	case 'n':
		return append(out, '\n'), i + 2, nil
	case 'r':
		return append(out, '\r'), i + 2, nil
	case 't':
		return append(out, '\t'), i + 2, nil
	case 'u':
	default:
		return out, i, errSyntax
	}
	r, ok := hex4(body[i+2:])
	if !ok {
		return out, i, errSyntax
	}
	i += 6
	switch {
	case utf16.IsSurrogate(r) && r < 0xdc00:
		// a high surrogate: a pair when a low one follows
		if lo, ok := lowAfter(body[i:]); ok {
			return utf8.AppendRune(out, utf16.DecodeRune(r, lo)), i + 6, nil
		}
		return utf8.AppendRune(out, utf8.RuneError), i, nil
	case r >= 0xdc80 && r <= 0xdcff:
		return append(out, byte(r-0xdc00)), i, nil // a byte that is not UTF-8
	case utf16.IsSurrogate(r):
		return utf8.AppendRune(out, utf8.RuneError), i, nil
	}
	return utf8.AppendRune(out, r), i, nil
}

// lowAfter reads a \u escape of a low surrogate at the start of b.
func lowAfter(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	r, ok := hex4(b[2:])
	return r, ok && r >= 0xdc00 && r <= 0xdfff
}

// hex4 reads four hex digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
