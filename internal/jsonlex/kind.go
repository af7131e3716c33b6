package jsonlex

import "strconv"

// Kind identifies the type of a [Token].
type Kind uint8

// The kinds of token that [Lexer.Next] returns.
const (
	EOF         Kind = iota // the input ended after one complete top-level value
	ObjectStart             // {
	ObjectEnd               // }
	ArrayStart              // [
	ArrayEnd                // ]
	Name                    // an object member name; Bytes holds the unescaped name
	String                  // a string value; Bytes holds the unescaped content
	Number                  // a number; Bytes holds the literal exactly as written
	True                    // true
	False                   // false
	Null                    // null
	NaN                     // the bare token NaN
	PosInf                  // the bare token Infinity
	NegInf                  // the bare token -Infinity
)

var kindNames = [...]string{
	EOF:         "EOF",
	ObjectStart: "ObjectStart",
	ObjectEnd:   "ObjectEnd",
	ArrayStart:  "ArrayStart",
	ArrayEnd:    "ArrayEnd",
	Name:        "Name",
	String:      "String",
	Number:      "Number",
	True:        "True",
	False:       "False",
	Null:        "Null",
	NaN:         "NaN",
	PosInf:      "PosInf",
	NegInf:      "NegInf",
}

// String returns the name of the kind, such as "ObjectStart" or "NaN".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Token is one lexical element of the input.
type Token struct {
	// Kind is the type of the token.
	Kind Kind
	// Offset is the byte offset of the token's first byte in the stream. For
	// EOF it is the length of the input.
	Offset int64
	// Bytes is the unescaped content of a Name or String and the literal text
	// of a Number; it is nil for the other kinds. It aliases the lexer's
	// buffers and is valid only until the next call on the Lexer: copy it to
	// keep it. Its capacity equals its length, so appending to it cannot
	// overwrite the lexer's buffers.
	Bytes []byte
	// Cut is set on a String longer than Options.MaxStringLen, when
	// Options.CutLongStrings lets it through: Bytes is its beginning.
	Cut bool
}
