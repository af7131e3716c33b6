// Package entryat reads single entries of a dump.json again, from the
// byte ranges package dump's Reader recorded (Entry.Offset, Entry.End):
// from the file, streaming, or from the bytes the reader's window still
// holds (Reader.Raw). The analysis scans a file in summary and comes back
// for the details of the few entries a verdict names.
//
// It imports package dump only.
//
// May import: dump.
package entryat
