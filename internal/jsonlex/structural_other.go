//go:build !amd64 && !arm64

package jsonlex

// haveClassifyVector: no vector classify on this architecture.
const haveClassifyVector = false

func classifyVector(b []byte, m []blockMasks) { classifyGeneric(b, m) }

func setClassifyVector(bool) bool { return false }
