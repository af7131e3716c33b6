package ctxtest

import (
	"context"
	"sync"
	"sync/atomic"
)

// CancelAfter is a context cancelled at the nth call of Err.
type CancelAfter struct {
	context.Context
	n     int64
	calls atomic.Int64
	once  sync.Once
	done  chan struct{}
}

// NewCancelAfter returns a context cancelled at the nth check (n < 1: the
// first).
func NewCancelAfter(n int64) *CancelAfter {
	return &CancelAfter{Context: context.Background(), n: n, done: make(chan struct{})}
}

// Err reports context.Canceled from the nth call on.
func (c *CancelAfter) Err() error {
	if c.calls.Add(1) >= c.n {
		c.once.Do(func() { close(c.done) })
		return context.Canceled
	}
	return nil
}

// Done is closed at the cancellation.
func (c *CancelAfter) Done() <-chan struct{} { return c.done }

// Checks is how many times Err was called.
func (c *CancelAfter) Checks() int64 { return c.calls.Load() }
