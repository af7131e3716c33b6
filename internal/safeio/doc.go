// Package safeio opens the files nanhunt reads, and only regular files: a
// FIFO without a writer, a character device such as /dev/zero, a socket or
// a directory given where a file is expected is refused at once with what
// it is, instead of blocking in open(2) or reading forever. Every reader of
// nanhunt (dump.json, stack.json, construct.json, training logs, monitor
// CSVs, rules files, saved verdicts) opens its input through it.
//
// It imports only the standard library.
//
// May import: the standard library only.
package safeio
