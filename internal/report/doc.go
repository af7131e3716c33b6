// Package report writes a verdict.Verdict for people (text), for issue
// trackers (Markdown) and for programs (JSON). One verdict in, one format out; nothing here analyses.
//
// It imports verdict, dump (entry names) and internal/safeio (byte sizes).
package report
