//go:build arm64

#include "textflag.h"

// The weight of each lane's bit in its half of a mask.
DATA anchorWeights<>+0(SB)/8, $0x8040201008040201
DATA anchorWeights<>+8(SB)/8, $0x8040201008040201
GLOBL anchorWeights<>(SB), RODATA|NOPTR, $16

// HALF computes in OUT the anchors plausible accepts among the 16 bytes at
// P (see anchorMasksNEON), all lanes 0xff or 0; V0-V10 are its scratch.
#define HALF(P, OUT) \
	SUB   $1, P, R10 \
	ADD   $1, P, R11 \
	ADD   $2, P, R12 \
	SUB   $2, P, R13 \
	VLD1  (P), [V0.B16] \
	VLD1  (R10), [V1.B16] \
	VLD1  (R11), [V2.B16] \
	VLD1  (R12), [V8.B16] \
	VLD1  (R13), [V10.B16] \
	VCMEQ V18.B16, V2.B16, V3.B16 \
	VCMEQ V17.B16, V2.B16, V4.B16 \
	VORR  V3.B16, V4.B16, V4.B16 \
	VCMEQ V16.B16, V0.B16, OUT.B16 \
	VAND  V4.B16, OUT.B16, OUT.B16 \
	VCMEQ V19.B16, V0.B16, V4.B16 \
	VCMEQ V20.B16, V2.B16, V6.B16 \
	VAND  V6.B16, V4.B16, V4.B16 \
	VORR  V4.B16, OUT.B16, OUT.B16 \
	VCMEQ V21.B16, V0.B16, V4.B16 \
	VORR  V4.B16, OUT.B16, OUT.B16 \
	VORR  V22.B16, V0.B16, V7.B16 \
	VSUB  V24.B16, V1.B16, V4.B16 \
	VUMIN V25.B16, V4.B16, V6.B16 \
	VCMEQ V6.B16, V4.B16, V4.B16 \
	VCMEQ V23.B16, V7.B16, V6.B16 \
	VAND  V6.B16, V4.B16, V4.B16 \
	VCMEQ V28.B16, V2.B16, V6.B16 \
	VEOR  V31.B16, V6.B16, V6.B16 \
	VAND  V6.B16, V4.B16, V4.B16 \
	VORR  V4.B16, OUT.B16, OUT.B16 \
	VCMEQ V26.B16, V7.B16, V4.B16 \
	VCMEQ V27.B16, V7.B16, V6.B16 \
	VORR  V6.B16, V4.B16, V4.B16 \
	VCMEQ V20.B16, V0.B16, V6.B16 \
	VORR  V6.B16, V4.B16, V4.B16 \
	VCMEQ V29.B16, V8.B16, V8.B16 \
	VCMEQ V17.B16, V1.B16, V9.B16 \
	VCMEQ V20.B16, V10.B16, V10.B16 \
	VAND  V10.B16, V9.B16, V9.B16 \
	VEOR  V31.B16, V9.B16, V9.B16 \
	VAND  V9.B16, V8.B16, V8.B16 \
	VEOR  V31.B16, V8.B16, V8.B16 \
	VAND  V8.B16, V4.B16, V4.B16 \
	VAND  V3.B16, V4.B16, V4.B16 \
	VORR  V4.B16, OUT.B16, OUT.B16

#define BYTES(C, V) \
	MOVD $C, R5 \
	VDUP R5, V.B16

// func anchorMasksNEON(b *byte, blocks int, out *uint64) int
//
// anchorMasksAVX2 (anchors_amd64.s) with NEON, sixteen bytes at a time:
// for each 32-byte block j at b[32j:32j+32] whose mask is not zero, it
// appends j<<32 | mask to out and returns how many it appended; the mask
// has bit t set when the byte at b[32j+t] is an anchor that plausible
// accepts. It reads b[-2] to b[32*blocks+1] inclusive.
TEXT ·anchorMasksNEON(SB), NOSPLIT, $0-32
	MOVD b+0(FP), R0
	MOVD blocks+8(FP), R1
	MOVD out+16(FP), R2
	MOVD R2, R8
	MOVD ZR, R3
	CBZ  R1, done
	BYTES(0x4e, V16) // N
	BYTES(0x61, V17) // a
	BYTES(0x22, V18) // "
	BYTES(0x49, V19) // I
	BYTES(0x6e, V20) // n
	BYTES(0x5c, V21) // backslash
	BYTES(0x20, V22) // the lower-case bit
	BYTES(0x65, V23) // e
	BYTES(0x30, V24) // 0
	BYTES(0x09, V25) // 9 - 0
	BYTES(0x66, V26) // f
	BYTES(0x79, V27) // y
	BYTES(0x2d, V28) // -
	BYTES(0x3a, V29) // :
	BYTES(0xff, V31)
	MOVD $anchorWeights<>(SB), R5
	VLD1 (R5), [V30.B16]

loop:
	HALF(R0, V5)
	ADD  $16, R0, R14
	HALF(R14, V11)
	VAND  V30.B16, V5.B16, V5.B16
	VAND  V30.B16, V11.B16, V11.B16
	VADDP V11.B16, V5.B16, V12.B16
	VADDP V12.B16, V12.B16, V12.B16
	VADDP V12.B16, V12.B16, V12.B16
	VMOV  V12.S[0], R4
	CBZW  R4, next
	MOVW  R4, (R2)
	MOVW  R3, 4(R2)
	ADD   $8, R2

next:
	ADD $32, R0
	ADD $1, R3
	CMP R1, R3
	BLO loop

done:
	SUB R8, R2, R2
	LSR $3, R2, R2
	MOVD R2, ret+24(FP)
	RET
