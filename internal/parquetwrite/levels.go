package parquetwrite

import "encoding/binary"

// appendLevels appends levels (each below 1<<width) in Parquet's
// RLE/bit-packed hybrid encoding, preceded by its length in four bytes as
// data pages of version 1 hold it.
func appendLevels(b []byte, levels []uint8, width uint) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = appendHybrid(b, levels, width)
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// appendHybrid appends values (each below 1<<width, width at most 32) in
// the RLE/bit-packed hybrid encoding. Runs of eight equal values become RLE
// runs; the rest is bit-packed, eight values at a time (the last group
// padded with zeros, which the page's value count tells a reader to drop).
func appendHybrid[T uint8 | uint32](b []byte, values []T, width uint) []byte {
	var packed []T // values waiting to be bit-packed, a multiple of 8 long
	var run T
	runLen := 0
	flushRun := func() {
		if runLen > 0 {
			b = binary.AppendUvarint(b, uint64(runLen)<<1)
			for i := uint(0); i < (width+7)/8; i++ { // the value in whole bytes, little-endian
				b = append(b, byte(uint64(run)>>(8*i)))
			}
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
	for i := 0; i < len(values); i += 8 {
		g := values[i:min(i+8, len(values))]
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
	return b
}

func equal[T uint8 | uint32](g []T) bool {
	for _, v := range g[1:] {
		if v != g[0] {
			return false
		}
	}
	return true
}

// appendPacked bit-packs values, least significant bit first, width bits
// each; len(values) is a multiple of 8, so whole bytes come out.
func appendPacked[T uint8 | uint32](b []byte, values []T, width uint) []byte {
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
