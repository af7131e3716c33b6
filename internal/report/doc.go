// Package report writes a verdict.Verdict for people (text), for issue
// trackers (Markdown), for programs (JSON), and in the shapes the
// nan-overflow-detection agent skill's scripts wrote (Skill). One verdict
// in, one format out; nothing here analyses.
//
// It imports verdict, internal/intranges (lists of steps and ranks),
// internal/ranklist and internal/safeio (byte sizes).
package report
