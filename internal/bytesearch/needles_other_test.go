//go:build !amd64

package bytesearch

// eachNeedleKernel runs f with the needle search of this architecture.
func eachNeedleKernel(f func(kernel string)) { f("plain") }
