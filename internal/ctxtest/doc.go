// Package ctxtest holds contexts for tests of readers that must stop when
// their context is cancelled: CancelAfter is cancelled at its nth check,
// so that the cancellation lands in the middle of a read whatever the
// machine's speed.
//
// It imports no nanhunt package.
//
// May import: the standard library only.
package ctxtest
