// Package jsonlex is a streaming JSON tokenizer for the files msprobe writes.
//
// It differs from encoding/json and jsontext in the ways dump.json needs:
//
//   - the bare tokens NaN, Infinity and -Infinity (what Python's json module
//     writes for non-finite floats) are accepted as values;
//   - it reads from an io.Reader through a fixed window, so memory does not
//     grow with the size of the input, and every token carries its byte
//     offset in the stream;
//   - it does not build values: the caller pulls tokens and decides what to
//     keep, so skipping the parts it does not need costs almost nothing.
//
// Syntax is otherwise strict JSON (RFC 8259): the grammar of numbers,
// strings, escapes, commas and colons is checked, and an error names the byte
// offset where the input stopped making sense.
package jsonlex
