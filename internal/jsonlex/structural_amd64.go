//go:build amd64

package jsonlex

// classifyAVX2 and cpuHasAVX2 are in structural_amd64.s.
//
//go:noescape
func classifyAVX2(b *byte, blocks int, m *blockMasks)

func cpuHasAVX2() bool

// haveClassifyVector: the vector classify runs on this CPU.
var haveClassifyVector = cpuHasAVX2()

// classifyVector is classify with AVX2; len(b) is 64*len(m), len(m) > 0.
func classifyVector(b []byte, m []blockMasks) {
	_ = b[64*len(m)-1]
	classifyAVX2(&b[0], len(m), &m[0])
}

// setClassifyVector lets tests and benchmarks run the plain Go path; it
// returns the setting it replaces.
func setClassifyVector(on bool) (was bool) {
	was, haveClassifyVector = haveClassifyVector, on && cpuHasAVX2()
	return was
}
