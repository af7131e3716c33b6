package monitor

import (
	"context"
	"io"
)

// cancelReader stops a file's scan once ctx is done: each read of the
// underlying file (256 KiB at a time) first checks ctx.
type cancelReader struct {
	ctx context.Context
	r   io.Reader
}

func (c cancelReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
