// Package report writes a verdict.Verdict for people (text), for issue
// trackers (Markdown), for programs (JSON), and in the shapes the
// nan-overflow-detection agent skill's scripts wrote (Skill). One verdict
// in, one format out; nothing here analyses, and nothing reads a file: a
// saved verdict gives the report its live trace gave.
//
// It imports verdict, internal/notation (rank lists), internal/ranklist
// (ranks named for people) and internal/safeio (byte sizes).
//
// May import: internal/notation, internal/ranklist, internal/safeio, verdict.
package report
