// Package fsjson writes strings that may hold bytes that are not UTF-8 (a
// file name on Linux is any bytes but "/" and NUL) as JSON strings that
// give the bytes back, and reads them again.
//
// A byte that is not part of valid UTF-8 is written as the escape of a
// lone low surrogate, \udc80 to \udcff for the bytes 0x80 to 0xff: Python's
// "surrogateescape" convention, so that json.loads gives the str that
// os.fsdecode gives for those bytes, and os.fsencode turns it back into
// them. Valid UTF-8 is written exactly as encoding/json writes it, so a
// string that is UTF-8 looks the same either way. Valid UTF-8 never holds
// a surrogate, so the escapes cannot be mistaken for text; a reader that
// does not know the convention (encoding/json) reads each of them as
// U+FFFD, as it reads the bytes encoding/json would have written.
//
// It imports only the standard library.
//
// May import: the standard library only.
package fsjson
