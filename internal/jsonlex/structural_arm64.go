//go:build arm64

package jsonlex

// classifyNEON is in structural_arm64.s.
//
//go:noescape
func classifyNEON(b *byte, blocks int, m *blockMasks)

// haveClassifyVector: the vector classify runs (every arm64 CPU has NEON).
var haveClassifyVector = true

// classifyVector is classify with NEON; len(b) is 64*len(m), len(m) > 0.
func classifyVector(b []byte, m []blockMasks) {
	_ = b[64*len(m)-1]
	classifyNEON(&b[0], len(m), &m[0])
}

// setClassifyVector lets tests and benchmarks run the plain Go path; it
// returns the setting it replaces.
func setClassifyVector(on bool) (was bool) {
	was, haveClassifyVector = haveClassifyVector, on
	return was
}
