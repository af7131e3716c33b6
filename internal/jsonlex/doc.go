// Package jsonlex is a streaming JSON tokenizer for the files msprobe writes.
//
// It differs from encoding/json and jsontext in the ways dump.json needs:
//
//   - the bare tokens NaN, Infinity and -Infinity (what Python's json module
//     writes for non-finite floats) are accepted as values, and returned as
//     tokens of their own kinds;
//   - it reads from an io.Reader through a fixed window, so memory does not
//     grow with the size of the input, and every token carries its byte
//     offset in the stream;
//   - it does not build values: the caller pulls tokens with [Lexer.Next] and
//     decides what to keep, and [Lexer.SkipValue] passes over the parts it
//     does not need without copying or unescaping anything;
//     [Lexer.SkipValueFast] does so through a structural index: the quotes,
//     backslashes and brackets of 64 bytes classified at once (AVX2 on
//     amd64, NEON on arm64, with a plain Go reference they are tested
//     against), strings found
//     by a prefix XOR of the quote bits and nesting by popcounts; and
//     [Lexer.SkipObjectLines] passes over an indented object to its closing
//     line, looking only for that line's '}' where it lies the line's
//     length after a newline ([IndexAfterNewline], 32 bytes at a time with
//     AVX2; [LastIndexAfterNewline] looks from the end);
//   - a caller that knows the shape of what follows may read it straight
//     from the window with the lexer's own scanners ([Lexer.Pending],
//     [ScanNumber], [ScanPlain], [SkipSpace]) and then say how far it got
//     ([Lexer.Close], [Lexer.ConsumeValue]), checking every byte as
//     strictly as Next would.
//
// Syntax is otherwise strict JSON (RFC 8259): one top-level value, and the
// grammar of numbers, strings, escapes, commas and colons is checked. A
// leading byte order mark is rejected. Invalid UTF-8 inside strings is passed
// through unchanged. An error is a [*SyntaxError] that names the byte offset
// where the input stopped making sense and says whether the input was merely
// truncated.
//
// The Bytes of a token point into the lexer's buffers and are valid only
// until the next call on the lexer; in the steady state no call allocates.
//
// It imports only the standard library.
//
// May import: the standard library only.
package jsonlex
