package parquetwrite

import "encoding/binary"

// appendLevels appends levels (each below 1<<width) in Parquet's
// RLE/bit-packed hybrid encoding, preceded by its length in four bytes as
// data pages of version 1 hold it. Runs of eight equal levels become RLE
// runs; the rest is bit-packed, eight levels at a time (the last group
// padded with zeros, which the page's value count tells a reader to drop).
func appendLevels(b []byte, levels []uint8, width uint) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	var packed []uint8 // levels waiting to be bit-packed, a multiple of 8 long
	run, runLen := uint8(0), 0
	flushRun := func() {
		if runLen > 0 {
			b = binary.AppendUvarint(b, uint64(runLen)<<1)
			b = append(b, run) // width <= 8: one byte per value
			runLen = 0
		}
	}
	flushPacked := func() {
		if len(packed) > 0 {
			b = binary.AppendUvarint(b, uint64(len(packed)/8)<<1|1)
			b = appendPacked(b, packed, width)
			packed = packed[:0]
		}
	}
	for i := 0; i < len(levels); i += 8 {
		g := levels[i:min(i+8, len(levels))]
		if equal(g) {
			if runLen > 0 && run != g[0] {
				flushRun()
			}
			if runLen == 0 {
				flushPacked()
				run = g[0]
			}
			runLen += len(g)
			continue
		}
		flushRun()
		packed = append(packed, g...)
		for len(packed)%8 != 0 {
			packed = append(packed, 0)
		}
	}
	flushRun()
	flushPacked()
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

func equal(g []uint8) bool {
	for _, v := range g[1:] {
		if v != g[0] {
			return false
		}
	}
	return true
}

// appendPacked bit-packs values, least significant bit first, width bits
// each; len(values) is a multiple of 8, so whole bytes come out.
func appendPacked(b []byte, values []uint8, width uint) []byte {
	var acc uint64
	var n uint
	for _, v := range values {
		acc |= uint64(v) << n
		n += width
		for n >= 8 {
			b = append(b, byte(acc))
			acc >>= 8
			n -= 8
		}
	}
	return b
}
