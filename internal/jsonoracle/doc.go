// Package jsonoracle decodes JSON with msprobe's bare NaN/Infinity tokens
// through an independent, strict decoder (jsontext from
// github.com/go-json-experiment/json), into a plain ordered tree. Tests use
// it as the reference their own streaming readers are compared against.
//
// It imports only the standard library and go-json-experiment/json.
//
// May import: the standard library only.
package jsonoracle
