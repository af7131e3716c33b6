//go:build !unix

package repro

// openNonBlock is 0 where there are no FIFOs to block on.
const openNonBlock = 0
