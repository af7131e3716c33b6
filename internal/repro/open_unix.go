//go:build unix

package repro

import "syscall"

// openNonBlock opens a FIFO swapped in for a tensor file without blocking.
const openNonBlock = syscall.O_NONBLOCK
