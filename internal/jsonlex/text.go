package jsonlex

import "unicode/utf8"

// Text is the bytes of a string token (an entry name, a stack.json or
// construct.json key) as Go text: each byte that is not part of valid
// UTF-8 becomes U+FFFD, as JSON decoders read it, so that a name is the
// same string in every file that holds it and in the verdict.
func Text(b []byte) string {
	if utf8.Valid(b) { // ASCII 16 bytes at a time
		return string(b)
	}
	return validUTF8(b)
}

func validUTF8(b []byte) string {
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return string(out)
}
