package policy

import (
	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/bytesearch"
)

// Search is the byte search's part of the rule set.
func Search() bytesearch.SearchRules {
	return bytesearch.SearchRules{IgnoredStats: IgnoredStats}
}

// MasksOnly reports whether a file's byte-search hits can all be -inf that
// is not severe (see Severe): every hit is -inf only and lies in a forward
// API call (not a module, whose parameters are weights, nor a collective),
// and the file is whole, indented and has statistics. Such a file needs no
// parsing when its last hit also lies before its last backward entry, which
// the caller finds (bytesearch.LastEntry) only when MasksOnly holds.
func MasksOnly(h *bytesearch.Hits) bool {
	return h.Whole && h.Located && h.Forward && h.FirstSevere < 0 && h.Tensors > 0 && h.Stats > 0
}

// NoSuspects reports whether a file needs no parsing because its byte
// search found nothing that could be non-finite, in a whole file that has
// tensors with statistics. A file without any tensor is parsed: it may have
// no entries at all ("data": {}), which makes its rank unread.
func NoSuspects(h *bytesearch.Hits) bool { return h.Clear() && h.Tensors > 0 }

// ClearsFile reports whether a file needs no parsing: NoSuspects, or only
// -inf that cannot be severe: MasksOnly, and every hit before the last
// backward entry (lastBackward, the offset of the last backward entry's
// name, -1 when the file has none: then nothing is after it).
func ClearsFile(h *bytesearch.Hits, lastBackward int64) bool {
	if NoSuspects(h) {
		return true
	}
	return MasksOnly(h) && (lastBackward < 0 || h.LastEntry < lastBackward)
}

// IsBackwardName reports whether an entry name is a backward entry
// (….backward, Module….backward.N, Module….parameters_grad.N): a gradient.
func IsBackwardName(name string) bool {
	return dump.ParseName(name).IsBackward()
}

// IsBackwardNameBytes is IsBackwardName of a name's bytes, which it turns
// into a string only when they may be backward (bytesearch.MayBeBackward): a
// search over every entry line of a file then allocates for few of them.
func IsBackwardNameBytes(name []byte) bool {
	return bytesearch.MayBeBackward(name) && IsBackwardName(string(name))
}
