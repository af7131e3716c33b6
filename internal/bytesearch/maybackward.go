package bytesearch

import "bytes"

// MayBeBackward is a quick look at an entry name's bytes that is true for
// every name ParseName reads as backward (IsBackward), and false for most
// others: a backward name says "backward" or "parameters_grad", or ends in
// "_1" (the {api}_{N}_{M} form). It lets a search over every entry line
// leave the others unparsed.
func MayBeBackward(name []byte) bool {
	return bytes.Contains(name, []byte("backward")) || bytes.Contains(name, []byte("parameters_grad")) ||
		bytes.HasSuffix(name, []byte("_1"))
}
