//go:build arm64

#include "textflag.h"

// The weight of each lane's bit in its byte of a mask.
DATA classifyWeights<>+0(SB)/8, $0x8040201008040201
DATA classifyWeights<>+8(SB)/8, $0x8040201008040201
GLOBL classifyWeights<>(SB), RODATA|NOPTR, $16

// MASK stores at OFF(R2) the 64-bit mask of the bytes of V10-V13, the 64
// bytes of a block in order, that equal the bytes of C: each lane of the
// comparisons keeps its bit's weight, and three rounds of pairwise adds sum
// each eight lanes into a byte.
#define MASK(C, OFF) \
	VCMEQ C.B16, V10.B16, V0.B16 \
	VCMEQ C.B16, V11.B16, V1.B16 \
	VCMEQ C.B16, V12.B16, V2.B16 \
	VCMEQ C.B16, V13.B16, V3.B16 \
	VAND  V30.B16, V0.B16, V0.B16 \
	VAND  V30.B16, V1.B16, V1.B16 \
	VAND  V30.B16, V2.B16, V2.B16 \
	VAND  V30.B16, V3.B16, V3.B16 \
	VADDP V1.B16, V0.B16, V0.B16 \
	VADDP V3.B16, V2.B16, V2.B16 \
	VADDP V2.B16, V0.B16, V0.B16 \
	VADDP V0.B16, V0.B16, V0.B16 \
	VMOV  V0.D[0], R4 \
	MOVD  R4, OFF(R2)

// func classifyNEON(b *byte, blocks int, m *blockMasks)
//
// classifyAVX2 (structural_amd64.s) with NEON: for each 64-byte block j at
// b[64j:], m[j] gets the masks of quotes, backslashes, opening brackets
// and closing brackets, bytes compared 16 at a time. A bracket is found
// by b|0x20: '[' and '{' give 0x7b, ']' and '}' give 0x7d.
TEXT ·classifyNEON(SB), NOSPLIT, $0-24
	MOVD b+0(FP), R0
	MOVD blocks+8(FP), R1
	MOVD m+16(FP), R2
	CBZ  R1, done
	MOVD $0x22, R5
	VDUP R5, V20.B16
	MOVD $0x5c, R5
	VDUP R5, V21.B16
	MOVD $0x20, R5
	VDUP R5, V22.B16
	MOVD $0x7b, R5
	VDUP R5, V23.B16
	MOVD $0x7d, R5
	VDUP R5, V24.B16
	MOVD $classifyWeights<>(SB), R5
	VLD1 (R5), [V30.B16]

loop:
	VLD1.P 64(R0), [V10.B16, V11.B16, V12.B16, V13.B16]

	MASK(V20, 0)
	MASK(V21, 8)
	VORR V22.B16, V10.B16, V10.B16
	VORR V22.B16, V11.B16, V11.B16
	VORR V22.B16, V12.B16, V12.B16
	VORR V22.B16, V13.B16, V13.B16
	MASK(V23, 16)
	MASK(V24, 24)

	ADD  $32, R2
	SUB  $1, R1
	CBNZ R1, loop

done:
	RET
